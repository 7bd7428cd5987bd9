//! The `instrument` driver: the compiler wrappers (`wrapper`), the profile reader and reports
//! (`profiles`, `report`, `names`), the bitcode rewriter front end (`rewrite`), the bundled demo
//! (`demo`) and the probe benchmark (`bench`). It never links LLVM itself: the pass plugin is
//! loaded by clang, or by `rewrite` with dlopen.

pub mod bench;
pub mod callpaths;
pub mod cost;
pub mod demo;
pub mod experiment;
pub mod export;
pub mod html;
pub mod layout;
pub mod link;
pub mod live;
pub mod names;
pub mod profiles;
pub mod report;
pub mod rewrite;
pub mod run;
pub mod runtime;
pub mod suggest;
pub mod summary;
pub mod timeline;
pub mod toolchain;
pub mod tree;
pub mod view;
pub mod wrapper;
