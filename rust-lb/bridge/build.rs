//! Generates the C++ side of the bridge (`rdma-lb-bridge/src/lib.rs.h` under
//! `$CARGO_TARGET_DIR/cxxbridge/`) and compiles its glue into the static library.
fn main() {
    cxx_build::bridge("src/lib.rs")
        .std("c++17")
        .compile("rdma-lb-bridge-glue");
    println!("cargo:rerun-if-changed=src/lib.rs");
}
