//! The rustc flags that instrument a build, merged with the user's own, and what the cargo
//! arguments say (release or not, an explicit --target).

use instrument_toolchain::link::Syntax;
use instrument_toolchain::runtime::LinkArgument;
use std::path::Path;

/// Flags for rustc: bitcode to the linker, clang-22 + lld as the linker with the pass plugin
/// loaded, v0 symbol names (demanglable), and the sealed runtime linked natively. At opt-level
/// 0 the LTO backend runs no extension point, so dev builds run the pass as the link-time
/// pipeline itself.
pub fn instrument_flags(plugin: &Path, runtime: &[LinkArgument], release: bool) -> Vec<String> {
    let mut flags = vec![
        "-Clinker-plugin-lto".to_string(),
        "-Clinker=clang-22".into(),
        "-Clink-arg=-fuse-ld=lld".into(),
        format!("-Clink-arg=-Wl,--load-pass-plugin={}", plugin.display()),
        "-Csymbol-mangling-version=v0".into(),
    ];
    flags.extend(Syntax::Rustc.render(runtime).into_iter().map(|f| f.to_string_lossy().into_owned()));
    if !release {
        // -Xlinker, since -Wl, would split the pipeline text at commas.
        flags.extend(["-Clink-arg=-Xlinker".into(), "-Clink-arg=--lto-newpm-passes=instrument".into()]);
    }
    flags
}

/// The user's flags: CARGO_ENCODED_RUSTFLAGS (0x1f-separated) if set, else RUSTFLAGS
/// (whitespace-separated), as cargo itself reads them.
pub fn user_flags(encoded: Option<&str>, plain: Option<&str>) -> Vec<String> {
    match (encoded, plain) {
        (Some(e), _) if !e.is_empty() => e.split('\x1f').map(str::to_string).collect(),
        (_, Some(p)) => p.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// The user's flags followed by ours, encoded for CARGO_ENCODED_RUSTFLAGS.
pub fn encode(user: &[String], ours: &[String]) -> String {
    user.iter().chain(ours).map(String::as_str).collect::<Vec<_>>().join("\x1f")
}

/// cargo's own arguments (those before `--`).
fn cargo_part(args: &[String]) -> &[String] {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    &args[..end]
}

/// Whether the arguments ask for an optimised profile (release or bench).
pub fn is_release(args: &[String]) -> bool {
    let args = cargo_part(args);
    args.iter().enumerate().any(|(i, a)| match a.as_str() {
        "--release" | "-r" => true,
        "--profile" => args.get(i + 1).is_some_and(|p| p == "release" || p == "bench"),
        _ => a == "--profile=release" || a == "--profile=bench",
    })
}

/// The profile the arguments name with `--profile`, if any.
pub fn profile(args: &[String]) -> Option<&str> {
    let args = cargo_part(args);
    args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix("--profile=") {
        Some(name) => Some(name),
        None if a == "--profile" => args.get(i + 1).map(String::as_str),
        None => None,
    })
}

/// Whether the arguments name a target themselves.
pub fn names_target(args: &[String]) -> bool {
    cargo_part(args).iter().any(|a| a == "--target" || a.starts_with("--target="))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn user_flags_come_first_and_are_kept_whole() {
        let user = user_flags(None, Some(" --cfg  foo -Ctarget-cpu=native "));
        assert_eq!(user, strings(&["--cfg", "foo", "-Ctarget-cpu=native"]));
        let encoded = user_flags(Some("-Clink-arg=-L/a b\x1f--cfg\x1fx"), Some("ignored"));
        assert_eq!(encoded, strings(&["-Clink-arg=-L/a b", "--cfg", "x"]));
        assert_eq!(encode(&encoded, &strings(&["-Cx"])), "-Clink-arg=-L/a b\x1f--cfg\x1fx\x1f-Cx");
        assert!(user_flags(Some(""), None).is_empty());
    }

    #[test]
    fn release_and_target_are_read_from_cargo_arguments_only() {
        assert!(is_release(&strings(&["--release"])));
        assert!(is_release(&strings(&["-p", "app", "--profile", "bench"])));
        assert!(is_release(&strings(&["--profile=release"])));
        assert!(!is_release(&strings(&["--", "--release"])), "program arguments are not cargo's");
        assert!(!is_release(&strings(&["--profile", "dev"])));
        assert!(names_target(&strings(&["--target=x86_64-unknown-linux-gnu"])));
        assert!(!names_target(&strings(&["--", "--target"])));
        assert_eq!(profile(&strings(&["--profile", "release-lto"])), Some("release-lto"));
        assert_eq!(profile(&strings(&["-p", "x", "--profile=deb"])), Some("deb"));
        assert_eq!(profile(&strings(&["--release", "--", "--profile", "x"])), None);
    }

    fn rt() -> Vec<LinkArgument> {
        vec![LinkArgument::Input("/rt.a".into()), LinkArgument::Linker("-lpthread".into())]
    }

    #[test]
    fn dev_builds_run_the_pass_as_the_link_time_pipeline() {
        let dev = instrument_flags(Path::new("/p.so"), &rt(), false);
        assert!(dev.contains(&"-Clink-arg=--lto-newpm-passes=instrument".to_string()));
        let release = instrument_flags(Path::new("/p.so"), &rt(), true);
        assert!(!release.iter().any(|f| f.contains("lto-newpm-passes")));
        assert!(release.contains(&"-Clink-arg=-Wl,--load-pass-plugin=/p.so".to_string()));
        assert!(release.ends_with(&["-Clink-arg=/rt.a".to_string(), "-Clink-arg=-lpthread".to_string()]));
    }
}
