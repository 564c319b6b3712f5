//! Generates the C++ side of the bridge (`rdma-lb-bridge/src/{types,scenario,host,switch,
//! config,lib}.rs.h` under `$CARGO_TARGET_DIR/cxxbridge/`; `lib.rs.h`, the one C++ includes,
//! includes the others) and compiles their glue into the static library.
fn main() {
    cxx_build::bridges([
        "src/types.rs",
        "src/scenario.rs",
        "src/host.rs",
        "src/switch.rs",
        "src/config.rs",
        "src/lib.rs",
    ])
    .std("c++17")
    .compile("rdma-lb-bridge-glue");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/scenario.rs");
    println!("cargo:rerun-if-changed=src/types.rs");
    println!("cargo:rerun-if-changed=src/host.rs");
    println!("cargo:rerun-if-changed=src/switch.rs");
    println!("cargo:rerun-if-changed=src/config.rs");
}
