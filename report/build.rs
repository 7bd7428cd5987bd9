//! The pprof protobuf schema compiled to Rust (protox parses it, so no protoc is needed on the
//! machine).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=proto/profile.proto");
    let descriptors =
        protox::compile(["proto/profile.proto"], ["proto"]).expect("proto/profile.proto compiles");
    prost_build::Config::new().compile_fds(descriptors).expect("prost generates the pprof types");
}
