//! The build side of instrument, all that building an instrumented program needs and nothing
//! more (no report, no terminal UI), so the compiler wrappers and `cargo instrument` stay light:
//! the wrappers (`wrapper`), where the plugin and the runtime are (`layout`), the toolchain's
//! tools (`toolchain`), the sealed runtime and its link arguments (`runtime`, `link`), and the
//! bitcode rewriter's front door (`rewrite`). It never links LLVM itself: the pass plugin is
//! loaded by clang, or by `rewrite` with dlopen.

pub mod error;
pub mod layout;
pub mod link;
pub mod rewrite;
pub mod runtime;
pub mod toolchain;
pub mod wrapper;

pub use error::{Result, ToolchainError};
