//! Generates the C++ side of the bridge (`rdma-lb-bridge/src/lib.rs.h` and
//! `rdma-lb-bridge/src/scenario.rs.h` under `$CARGO_TARGET_DIR/cxxbridge/`) and compiles
//! their glue into the static library.
fn main() {
    cxx_build::bridges(["src/lib.rs", "src/scenario.rs"])
        .std("c++17")
        .compile("rdma-lb-bridge-glue");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/scenario.rs");
}
