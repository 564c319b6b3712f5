"""scripts/simai-scale-workload: the scaled file both simulators read (data/simai/reference/
README.md, case 6). It must rebuild case 6's stored workload from AICB's file byte for byte,
keep sizes that would truncate to 0 B (SimAI never completes a 0-byte collective), scale
exactly, and refuse bad lines with file:line: field, exit 2 and nothing written."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "simai-scale-workload"
CASE6 = REPO / "data/simai/reference/case6_llama7b_tp2_128g/l7b_tp2_128g_c64.txt"
AICB = REPO / "data/simai/workload/L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, check=False)


def test_rebuilds_case_6_from_aicb_s_file(tmp_path):
    # Case 6's header (AICB's current keys) over AICB's 76 layer lines, sizes x 1/64.
    header = CASE6.read_text().split("\n")[0]
    src = tmp_path / "in.txt"
    src.write_text("\n".join([header] + AICB.read_text().split("\n")[1:]))
    out = tmp_path / "out.txt"
    r = run(src, out, "0.015625", "1")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == CASE6.read_bytes()
    # The optimizer's four 4-byte all-reduces would be 0 B: kept, and said so.
    assert "kept 4 sizes" in r.stderr


def layer(name, fwd_size, ig_size, wg_size, compute=1000):
    return "\t".join([name, "-1", str(compute), "ALLREDUCE", str(fwd_size), str(compute), "NONE",
                      "0", str(compute), "REDUCESCATTER", str(wg_size), "100"]).replace(
                          "NONE\t0", f"ALLGATHER\t{ig_size}")


def test_scales_exactly_and_truncates(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 2\n1\n"
                   + layer("l", 1000, 999, 3, compute=7) + "\n")
    out = tmp_path / "out.txt"
    assert run(src, out, "0.1", "0.5").returncode == 0
    fields = out.read_text().split("\n")[2].split("\t")
    # Sizes x 0.1 (999 -> 99 truncated; 3 -> 0 kept as 3), compute x 0.5 (7 -> 3), the update
    # time (last field) as it was.
    assert [fields[i] for i in (2, 4, 5, 7, 8, 10, 11)] == ["3", "100", "3", "99", "3", "3",
                                                            "100"]


def test_bad_line_names_file_line_and_field_and_writes_nothing(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 2\n2\n"
                   + layer("a", 8, 8, 8) + "\n" + layer("b", 8, 8, 8).replace("\t8\t", "\tx\t", 1)
                   + "\n")
    out = tmp_path / "out.txt"
    r = run(src, out, "0.5")
    assert r.returncode == 2
    assert f"{src}:4: field 5 (size) `x` is not an integer" in r.stderr
    assert not out.exists()
    short = tmp_path / "short.txt"
    short.write_text("HYBRID_TRANSFORMER_FWD_IN_BCKWD\n1\nonly\tthree\tfields\n")
    r = run(short, out, "0.5")
    assert r.returncode == 2 and f"{short}:3: 3 tab-separated fields" in r.stderr
    assert not out.exists()
    assert run(src, out, "-1").returncode != 0
