//! Generates the C++ side of the bridge (`rdma-lb-bridge/src/types.rs.h`,
//! `rdma-lb-bridge/src/scenario.rs.h` and `rdma-lb-bridge/src/lib.rs.h` under
//! `$CARGO_TARGET_DIR/cxxbridge/`, each including the ones before it) and compiles their glue
//! into the static library.
fn main() {
    cxx_build::bridges(["src/types.rs", "src/scenario.rs", "src/lib.rs"])
        .std("c++17")
        .compile("rdma-lb-bridge-glue");
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/scenario.rs");
    println!("cargo:rerun-if-changed=src/types.rs");
}
