//! Workload parser tests: SimAI's and AICB's own files (data/simai/workload/, see the README
//! there) with numbers read off the files, then malformed input.

use super::*;

fn data(rel: &str) -> (String, String) {
    let path = format!(
        "{}/../../data/simai/workload/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

fn parse_data(rel: &str) -> Workload {
    let (path, text) = data(rel);
    parse_workload_str(&path, &text).unwrap()
}

fn err(text: &str) -> ScenarioError {
    parse_workload_str("w.txt", text).unwrap_err()
}

const HEADER: &str = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 \
                      vpp: 8 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0";

#[test]
fn simai_micro_all_reduce_example() {
    let w = parse_data("microAllReduce.txt");
    let h = &w.header;
    assert_eq!(h.policy, Policy::HybridTransformerFwdInBckwd);
    assert_eq!(
        (h.tp, h.ep, h.pp, h.vpp, h.ga, h.all_gpus),
        (Some(8), Some(1), Some(1), Some(8), Some(1), Some(8))
    );
    assert!(h.checkpoints.is_empty() && h.checkpoint_initiates.is_empty());
    assert_eq!(h.pp_comm_bytes, None);
    assert!(h.ignored.is_empty());
    assert_eq!(w.layers.len(), 2);
    let l = &w.layers[1];
    assert_eq!(
        (l.line, l.name.as_str(), l.reserved),
        (4, "embedding_layer", -1)
    );
    assert_eq!(l.forward.compute_ns, 556_000);
    assert_eq!(
        l.forward.comm,
        Some(Comm {
            kind: CommKind::AllReduce,
            group: CommGroup::Tp,
            bytes: 67_108_864
        })
    );
    assert_eq!(
        l.input_grad,
        Phase {
            compute_ns: 1,
            comm: None
        }
    );
    assert_eq!(
        l.weight_grad,
        Phase {
            compute_ns: 1,
            comm: None
        }
    );
    assert_eq!(l.update_ns, 1);
    assert_eq!(w.layers[0].forward.comm.map(|c| c.bytes), Some(16_777_216));
    assert!(w.ignored_after_layers.is_empty());
    // Extra text on the last layer line and after it is never read by SimAI: kept aside.
    let (_, text) = data("microAllReduce.txt");
    let w = parse_workload_str("w", &format!("{text} 3\n# end\n")).unwrap();
    assert_eq!(w.layers.len(), 2);
    assert_eq!(
        w.ignored_after_layers,
        vec![(4, "3".to_owned()), (5, "# end".to_owned())]
    );
}

#[test]
fn simai_analytical_example_with_ep_groups() {
    let w = parse_data("workload_analytical.txt");
    let h = &w.header;
    assert_eq!(
        (h.tp, h.ep, h.pp, h.vpp, h.ga, h.all_gpus),
        (Some(2), Some(16), Some(12), Some(8), Some(24), Some(9216))
    );
    // Written `pp_comm 50331648`, without the colon.
    assert_eq!(h.pp_comm_bytes, Some(50_331_648));
    assert_eq!(w.layers.len(), 1789);
    assert!(w.ignored_after_layers.is_empty());

    let moe1 = &w.layers[4];
    assert_eq!(moe1.name, "moe_grad_norm1");
    assert_eq!(
        moe1.weight_grad.comm,
        Some(Comm {
            kind: CommKind::AllGather,
            group: CommGroup::DpEp,
            bytes: 19_327_352_832
        })
    );
    let emb = &w.layers[6];
    assert_eq!(emb.name, "embedding_layer");
    assert_eq!(
        (emb.forward.compute_ns, emb.weight_grad.compute_ns),
        (622_731, 15_091_072)
    );
    // Unsuffixed weight-gradient comms are DP; `_EP` is EP in any phase.
    let grad_gather = &w.layers[0];
    assert_eq!(
        grad_gather.weight_grad.comm.map(|c| c.group),
        Some(CommGroup::Dp)
    );
    let a2a_ep = &w.layers[11];
    assert_eq!(
        a2a_ep.input_grad.comm,
        Some(Comm {
            kind: CommKind::AllToAll,
            group: CommGroup::Ep,
            bytes: 100_663_296
        })
    );

    // Comm counts by (kind, group) over all three phases, as `awk` counts the type columns.
    let count = |kind, group| {
        w.comms()
            .filter(|(_, _, c)| c.kind == kind && c.group == group)
            .count()
    };
    assert_eq!(count(CommKind::AllToAll, CommGroup::Ep), 768);
    assert_eq!(count(CommKind::AllToAll, CommGroup::Tp), 768);
    assert_eq!(count(CommKind::AllGather, CommGroup::DpEp), 1);
    assert_eq!(count(CommKind::ReduceScatter, CommGroup::DpEp), 1);
    assert_eq!(w.comms().count(), 3 * 1789 - 1827);
}

#[test]
fn simai_aicb_micro_benchmark() {
    let w = parse_data("aicb_micro_all_reduce.txt");
    assert_eq!(w.header.policy, Policy::Micro);
    assert_eq!(w.header.tp, None);
    assert_eq!(w.layers.len(), 19);
    let sizes: Vec<u64> = w
        .comms()
        .map(|(_, phase, c)| {
            assert_eq!(
                (phase, c.kind, c.group),
                (PhaseKind::WeightGrad, CommKind::AllReduce, CommGroup::Dp)
            );
            c.bytes
        })
        .collect();
    assert_eq!(sizes, (0..19).map(|k| 4096u64 << k).collect::<Vec<_>>());
}

#[test]
fn simai_aicb_headers_with_unread_keys() {
    // AICB's multi-all-reduce writer spells EP `expert_parallel_npu_group:`, which SimAI
    // ignores; this file has the short header only.
    let w = parse_data("aicb_muti_all_reduce.txt");
    assert_eq!(w.header.tp, Some(8));
    assert_eq!(w.header.ep, None);
    assert_eq!(w.layers.len(), 19);

    let w = parse_data("G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt");
    assert_eq!(w.layers.len(), 92);
    // `norm` broadcasts in the forward phase: kept, but SimAI sends nothing for it.
    let norm = &w.layers[0];
    let bc = norm.forward.comm.unwrap();
    assert_eq!((bc.kind, bc.bytes), (CommKind::Broadcast, 16_384));
    assert!(!bc.kind.simai_sends());
    assert_eq!(
        w.layers[1].weight_grad.comm,
        Some(Comm {
            kind: CommKind::ReduceScatter,
            group: CommGroup::Dp,
            bytes: 6_497_239_040
        })
    );
}

#[test]
fn simai_truncated_aicb_file_is_a_count_error() {
    let (path, text) = data("L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt");
    let e = parse_workload_str(&path, &text).unwrap_err();
    assert_eq!(
        (e.kind, e.key.as_str(), e.line),
        (ErrorKind::Count, "layers", Some(35))
    );
    assert!(e.message.contains("839 layers"), "{e}");
}

#[test]
fn simai_header_forms() {
    // `pp_comm:` with a float, as AICB writes it with sequence parallelism.
    let t = format!("{HEADER} pp_comm: 6291456.0\n0\n");
    let w = parse_workload_str("w", &t).unwrap();
    assert_eq!(w.header.pp_comm_bytes, Some(6_291_456));
    // Checkpoint lists, and keys SimAI reads only for other policies.
    let w = parse_workload_str(
        "w",
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 2 0 1 checkpoint_initiates: 1 1\n2\n\
         a -1 1 NONE 0 1 NONE 0 1 NONE 0 1\nb -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n",
    )
    .unwrap();
    assert_eq!(w.header.checkpoints, vec![0, 1]);
    assert_eq!(w.header.checkpoint_initiates, vec![1]);
    let w = parse_workload_str("w", "MICRO ep: 4\n0\n").unwrap();
    assert_eq!(w.header.ep, None);
    assert_eq!(w.header.ignored, vec!["ep:".to_owned(), "4".to_owned()]);
    // HYBRID_CUSTOMIZED has a 13th field.
    let w = parse_workload_str(
        "w",
        "HYBRID_CUSTOMIZED\n1\nx -1 5 ALLGATHER_EP 64 6 NONE 0 7 ALLREDUCE_DP_EP 128 9 DATA\n",
    )
    .unwrap();
    let l = &w.layers[0];
    assert_eq!(l.policy, Some(Policy::Data));
    assert_eq!(l.forward.comm.map(|c| c.group), Some(CommGroup::Ep));
    assert_eq!(
        l.weight_grad.comm.map(|c| (c.group, c.bytes)),
        Some((CommGroup::DpEp, 128))
    );
    assert_eq!((l.input_grad.compute_ns, l.update_ns), (6, 9));
}

#[test]
fn simai_names_are_defined_once() {
    for p in Policy::ALL {
        assert_eq!(Policy::from_token(p.token()), Some(*p));
    }
    for k in CommKind::ALL {
        assert_eq!(CommKind::from_token(&k.to_string()), Some(*k));
    }
    assert_eq!(CommKind::from_token("NONE"), None);
}

#[test]
fn simai_bad_workloads_name_line_and_field() {
    let cases: &[(&str, usize, &str, ErrorKind)] = &[
        ("", 1, "policy", ErrorKind::Missing),
        ("HYBRID_TRANSFORMERS\n0\n", 1, "policy", ErrorKind::UnknownKey),
        // Truncated header: a key without its value.
        ("HYBRID_TRANSFORMER model_parallel_NPU_group:\n0\n", 1, "model_parallel_NPU_group:", ErrorKind::Missing),
        ("HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 2 0\n1\n", 1, "checkpoints:", ErrorKind::Missing),
        ("HYBRID_TRANSFORMER ep: x\n0\n", 1, "ep:", ErrorKind::Syntax),
        ("HYBRID_TRANSFORMER ep: 0\n0\n", 1, "ep:", ErrorKind::Value),
        ("HYBRID_TRANSFORMER ep: 2 ep: 2\n0\n", 1, "ep:", ErrorKind::Duplicate),
        ("MICRO pp_comm: 1.5\n0\n", 1, "pp_comm:", ErrorKind::Syntax),
        ("HYBRID_TRANSFORMER_FWD_IN_BCKWD checkpoints: 1 3\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n", 1, "checkpoints:", ErrorKind::Value),
        ("MICRO\n", 1, "layer count", ErrorKind::Missing),
        ("MICRO\ntwo\n", 2, "layer count", ErrorKind::Syntax),
        // Truncated layer line: the first missing field is named.
        ("MICRO\n1\nx -1 1 NONE 0 1 NONE\n", 3, "ig_comm_bytes", ErrorKind::Missing),
        ("MICRO\n1\nx -1 1 ALLREDUSE 8 1 NONE 0 1 NONE 0 1\n", 3, "fwd_comm_type", ErrorKind::UnknownKey),
        ("MICRO\n1\nx -1 1 NONE 0 1 NONE 0 1 ALLREDUCE_TP 8 1\n", 3, "wg_comm_type", ErrorKind::UnknownKey),
        ("MICRO\n1\nx -1 1 NONE 0 1 ALLREDUCEALLTOALL 8 1 NONE 0 1\n", 3, "ig_comm_type", ErrorKind::Unsupported),
        ("MICRO\n1\nx -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8MB 1\n", 3, "wg_comm_bytes", ErrorKind::Syntax),
        ("MICRO\n1\nx -1 1 NONE 0 1 NONE 0 1 ALLREDUCE -8 1\n", 3, "wg_comm_bytes", ErrorKind::Syntax),
        ("MICRO\n1\nx -1 1.5 NONE 0 1 NONE 0 1 NONE 0 1\n", 3, "fwd_compute_ns", ErrorKind::Syntax),
        ("MICRO\n1\nx r 1 NONE 0 1 NONE 0 1 NONE 0 1\n", 3, "reserved", ErrorKind::Syntax),
        ("MICRO\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 t\n", 3, "update_ns", ErrorKind::Syntax),
        ("HYBRID_CUSTOMIZED\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n", 3, "layer_policy", ErrorKind::Missing),
        ("HYBRID_CUSTOMIZED\n1\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 1 BOGUS\n", 3, "layer_policy", ErrorKind::UnknownKey),
        // An extra field before the last layer would shift every later token in SimAI.
        ("MICRO\n2\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 1 7\ny -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n", 3, "layer", ErrorKind::Syntax),
        ("MICRO\n2\nx -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n\n", 4, "layers", ErrorKind::Count),
    ];
    for &(text, line, field, kind) in cases {
        let e = err(text);
        assert_eq!(
            (e.line, e.key.as_str(), e.kind),
            (Some(line), field, kind),
            "input {text:?} gave {e}"
        );
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("w.txt:{line}: {field}: ")),
            "{shown}"
        );
    }
}

#[test]
fn aicb_llama7b_tp2_and_its_scaled_iteration() {
    // AICB's Llama-7B Megatron file (TP 2, no world size: SimAI takes it from the topology).
    let mut w = parse_data("L7B-M1-C04_Llama7B_megatron_tp2_pp1_mbs1_A100.txt");
    assert_eq!(w.header.tp, Some(2));
    assert_eq!(w.header.all_gpus, None);
    assert_eq!(w.layers.len(), 76);
    // grad_norm: forward ALLGATHER 6,754,926,592 B (TP), weight-gradient REDUCESCATTER
    // 13,509,853,184 B (DP, the default group of the weight-gradient slot).
    let gn = w.layers.iter().position(|l| l.name == "grad_norm").unwrap();
    let wg = w.layers[gn].weight_grad.comm.unwrap();
    assert_eq!(
        (wg.kind, wg.group, wg.bytes),
        (CommKind::ReduceScatter, CommGroup::Dp, 13_509_853_184)
    );
    let mlp = w.layers.iter().position(|l| l.name == "mlp_layer").unwrap();
    assert_eq!(w.layers[mlp].forward.compute_ns, 486_330);
    let update = w.layers[mlp].update_ns;
    // SimAI's comm_scale / compute_scale: products truncated; the update time is not scaled.
    w.scale(1.0 / 64.0, 1.0 / 64.0);
    let wg = w.layers[gn].weight_grad.comm.unwrap();
    assert_eq!(wg.bytes, 13_509_853_184 / 64); // exact: 2^-6 is a binary fraction
    assert_eq!(w.layers[mlp].forward.compute_ns, 7598); // 486,330 / 64 = 7,598.9, truncated
    assert_eq!(w.layers[mlp].update_ns, update);
    let ar = w.layers[mlp].forward.comm.unwrap();
    assert_eq!(ar.bytes, 16_777_216 / 64);
}
