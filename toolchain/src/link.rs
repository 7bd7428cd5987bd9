//! The runtime's link arguments written in a front end's own syntax, and `instrument link`: the
//! link step for a front end the wrappers do not wrap (D's `ldc2`, or any driver built on an
//! older LLVM than the plugin's). Such a program is built as bitcode, instrumented by
//! `instrument rewrite`, and linked by its own driver with the runtime added here:
//!
//! ```text
//! ldc2 -c -O -output-bc app.d -of=app.bc
//! instrument rewrite app.bc -o app.o
//! instrument link -- ldc2 app.o -of=app
//! ```

use crate::runtime::{self, LinkArgument};
use crate::{Result, ToolchainError};
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// How a front end's driver passes an argument on to the linker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Syntax {
    /// C-compatible drivers (clang, gcc, flang, gfortran): `-Wl,ARG`, libraries as `-lNAME`.
    Cc,
    /// D's LDC (`ldc2`, `ldmd2`): `-LARG`.
    Ldc,
    /// `-Xlinker ARG` (swiftc, and C drivers too).
    Xlinker,
    /// rustc: `-Clink-arg=ARG`, read by its C linker driver.
    Rustc,
}

impl Syntax {
    /// The syntax of the driver `program` (a path or a name), known by its file name: LDC's and
    /// Swift's drivers and rustc are told apart, anything else is taken as C-compatible.
    pub fn of(program: &Path) -> Syntax {
        let name = program.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let stem = name.split('-').next().unwrap_or(name);
        match stem {
            "ldc2" | "ldmd2" | "ldc" => Syntax::Ldc,
            "swiftc" | "swift" => Syntax::Xlinker,
            "rustc" => Syntax::Rustc,
            _ => Syntax::Cc,
        }
    }

    /// `arguments` as this driver takes them.
    pub fn render(self, arguments: &[LinkArgument]) -> Vec<OsString> {
        arguments.iter().flat_map(|argument| self.render_one(argument)).collect()
    }

    fn render_one(self, argument: &LinkArgument) -> Vec<OsString> {
        let linker = match argument {
            LinkArgument::Input(path) if self == Syntax::Rustc => {
                let mut flag = OsString::from("-Clink-arg=");
                flag.push(path);
                return vec![flag];
            }
            LinkArgument::Input(path) => return vec![path.into()],
            LinkArgument::Linker(text) => text,
        };
        let library = linker.starts_with("-l");
        match self {
            Syntax::Cc if library => vec![linker.into()],
            Syntax::Cc => vec![format!("-Wl,{linker}").into()],
            Syntax::Ldc => vec![format!("-L{linker}").into()],
            Syntax::Xlinker if library => vec![linker.into()],
            Syntax::Xlinker => vec!["-Xlinker".into(), linker.into()],
            Syntax::Rustc if library => vec![format!("-Clink-arg={linker}").into()],
            Syntax::Rustc => vec![format!("-Clink-arg=-Wl,{linker}").into()],
        }
    }
}

/// `instrument link -- DRIVER ARGS...`: runs the front end's link command with the runtime's
/// arguments appended in its syntax (`syntax`, or the one its name says), and returns its exit
/// code.
pub fn run(syntax: Option<Syntax>, command: &[OsString]) -> Result<i32> {
    let Some((program, arguments)) = command.split_first() else {
        return Err(ToolchainError::NoLinkCommand);
    };
    let syntax = syntax.unwrap_or_else(|| Syntax::of(Path::new(program)));
    let added = syntax.render(&runtime::link_arguments()?);
    let status = Command::new(program)
        .args(arguments)
        .args(&added)
        .status()
        .map_err(|source| ToolchainError::Io { action: "run", path: program.into(), source })?;
    Ok(exit_code(status))
}

/// The exit code a shell would show for `status`: its code, or 128 plus the signal that ended it.
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or(128 + status.signal().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(syntax: Syntax) -> Vec<String> {
        let arguments = [
            LinkArgument::Input("/rt/sealed.a".into()),
            LinkArgument::Linker("-lpthread".into()),
            LinkArgument::Linker("--wrap=execve".into()),
        ];
        syntax.render(&arguments).into_iter().map(|a| a.into_string().expect("utf-8")).collect()
    }

    #[test]
    fn each_driver_gets_the_runtime_in_its_own_syntax() {
        assert_eq!(strings(Syntax::Cc), ["/rt/sealed.a", "-lpthread", "-Wl,--wrap=execve"]);
        assert_eq!(strings(Syntax::Ldc), ["/rt/sealed.a", "-L-lpthread", "-L--wrap=execve"]);
        assert_eq!(strings(Syntax::Xlinker), ["/rt/sealed.a", "-lpthread", "-Xlinker", "--wrap=execve"]);
        assert_eq!(
            strings(Syntax::Rustc),
            ["-Clink-arg=/rt/sealed.a", "-Clink-arg=-lpthread", "-Clink-arg=-Wl,--wrap=execve"]
        );
    }

    #[test]
    fn a_driver_is_known_by_its_file_name() {
        assert_eq!(Syntax::of(Path::new("/usr/bin/ldc2")), Syntax::Ldc);
        assert_eq!(Syntax::of(Path::new("ldmd2")), Syntax::Ldc);
        assert_eq!(Syntax::of(Path::new("swiftc")), Syntax::Xlinker);
        assert_eq!(Syntax::of(Path::new("clang-22")), Syntax::Cc);
        assert_eq!(Syntax::of(Path::new("gfortran")), Syntax::Cc);
    }
}
