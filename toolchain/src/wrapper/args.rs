//! What a compiler command line asks for, as far as the wrapper must know: does it generate code
//! (so the pass plugin is wanted), does it link an executable (so the runtime is wanted), or is it
//! something else to pass through untouched (preprocessing, dependency generation, version
//! queries). Response files (`@file`) are read for this classification only; the compiler still
//! receives them as written.

/// Options whose value is the next argument (clang and gcc spellings).
const TAKES_VALUE: &[&str] = &[
    "-o",
    "-x",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "-L",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xclang",
    "-Xanalyzer",
    "-arch",
    "-target",
    "-u",
    "-e",
    "-T",
    "-z",
    "-l",
    "-aux-info",
    "-mllvm",
    "-F",
    "--param",
    "-ivfsoverlay",
    "-resource-dir",
    "-B",
    "--sysroot",
    "-Xopenmp-target",
    "-working-directory",
    "-dependency-file",
    "-fplugin-arg",
];

/// Options after which no code is generated.
const NO_CODEGEN: &[&str] = &["-E", "-M", "-MM", "-fsyntax-only", "--precompile", "--analyze"];
/// Options after which nothing is linked.
const NO_LINK: &[&str] = &["-c", "-S"];
/// Options that only query the compiler.
const QUERY_PREFIXES: &[&str] =
    &["--version", "-dumpversion", "-dumpmachine", "-print-", "--print-", "--help", "-###"];

const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "i", "cc", "cp", "cxx", "cpp", "CPP", "c++", "C", "ii", "m", "mm", "M", "mi", "mii", "bc", "ll",
    "f", "for", "ftn", "f77", "f90", "f95", "f03", "f08", "F", "FOR", "F90", "F95", "F03", "F08", "fpp",
    "FPP", "cuf", "CUF",
];
const NON_IR_LANGUAGES: &[&str] = &["assembler", "assembler-with-cpp"];

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Some input goes through LLVM's optimisation pipeline: add the pass plugin.
    pub generates_code: bool,
    /// An executable is linked: add the runtime.
    pub links_executable: bool,
    /// A shared object or relocatable object is linked: the runtime comes from the executable.
    pub links_library: bool,
}

pub fn classify(args: &[String]) -> Invocation {
    let args = expand_response_files(args);
    if args.iter().any(|a| QUERY_PREFIXES.iter().any(|p| a.starts_with(p))) {
        return Invocation::default();
    }
    let (mut sources, mut inputs) = (0usize, 0usize);
    let mut language: Option<String> = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "-x" {
            language = iter.next().cloned().filter(|l| l != "none");
        } else if let Some(l) = arg.strip_prefix("-x").filter(|l| !l.is_empty()) {
            language = Some(l.to_string()).filter(|l| l != "none");
        } else if TAKES_VALUE.contains(&arg.as_str()) {
            iter.next();
        } else if arg.starts_with("-l") {
            inputs += 1;
        } else if arg == "-" || !arg.starts_with('-') {
            inputs += 1;
            if is_source(arg, language.as_deref()) {
                sources += 1;
            }
        }
    }
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    let codegen = !has(NO_CODEGEN);
    let links = codegen && !has(NO_LINK) && inputs > 0;
    let library = has(&["-shared", "-r", "-Wl,-r"]);
    Invocation {
        generates_code: codegen && sources > 0,
        links_executable: links && !library,
        links_library: links && library,
    }
}

/// Whether a `-x LANG` other than `none` is still in force at the end of `args`: inputs the
/// wrapper appends (the runtime archive) must then follow `-x none`, or the compiler would read
/// them as LANG source.
pub fn language_in_force(args: &[String]) -> bool {
    let mut language: Option<&str> = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "-x" {
            language = iter.next().map(String::as_str);
        } else if let Some(l) = arg.strip_prefix("-x").filter(|l| !l.is_empty()) {
            language = Some(l);
        } else if TAKES_VALUE.contains(&arg.as_str()) {
            iter.next();
        }
    }
    language.is_some_and(|l| l != "none")
}

fn is_source(path: &str, language: Option<&str>) -> bool {
    match language {
        Some(lang) => !NON_IR_LANGUAGES.contains(&lang),
        None => path.rsplit_once('.').is_some_and(|(_, ext)| SOURCE_EXTENSIONS.contains(&ext)),
    }
}

/// Replaces `@file` arguments by the arguments the file holds (one level of nesting is
/// followed recursively; unreadable files are kept as written, as the compiler would report them).
fn expand_response_files(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        match arg.strip_prefix('@').and_then(|path| std::fs::read_to_string(path).ok()) {
            Some(text) => out.extend(expand_response_files(&shlex::split(&text).unwrap_or_default())),
            None => out.push(arg.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_in_force_at_the_end_is_seen() {
        let words = |line: &str| line.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(language_in_force(&words("-x c m.c -o p")));
        assert!(language_in_force(&words("-xc - -o p")));
        assert!(!language_in_force(&words("-x c m.c -x none lib.a -o p")));
        assert!(!language_in_force(&words("m.c -o p")));
        assert!(!language_in_force(&words("-o -x m.c")), "-x as the value of -o is a file name");
    }

    fn classify_str(line: &str) -> Invocation {
        classify(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn compile_only_generates_code_without_linking() {
        let i = classify_str("-O2 -c a.c -o a.o");
        assert!(i.generates_code && !i.links_executable && !i.links_library);
    }

    #[test]
    fn one_step_build_compiles_and_links() {
        let i = classify_str("-O2 a.c b.c -o app -lm");
        assert!(i.generates_code && i.links_executable);
    }

    #[test]
    fn link_only_links_without_plugin() {
        let i = classify_str("a.o b.o -o app");
        assert!(!i.generates_code && i.links_executable);
    }

    #[test]
    fn preprocessing_and_dependencies_pass_through() {
        for line in [
            "-E a.c",
            "-M a.c",
            "-MM a.c",
            "-fsyntax-only a.c",
            "--version",
            "-print-search-dirs",
            "-dumpversion",
        ] {
            assert_eq!(classify_str(line), Invocation::default(), "{line}");
        }
    }

    #[test]
    fn dependency_side_output_still_compiles() {
        let i = classify_str("-MD -MF a.d -c a.c -o a.o");
        assert!(i.generates_code && !i.links_executable);
    }

    #[test]
    fn option_values_are_not_inputs() {
        let i = classify_str("-o out.c -I inc.c -c x.s");
        assert!(!i.generates_code);
    }

    #[test]
    fn language_override_applies_to_following_inputs() {
        assert!(classify_str("-x c -c conftest.txt").generates_code);
        assert!(!classify_str("-x assembler -c a.c").generates_code);
        assert!(classify_str("-x assembler a.s -x none -c b.c").generates_code);
    }

    #[test]
    fn shared_objects_get_no_runtime() {
        let i = classify_str("-shared -fPIC a.c -o liba.so");
        assert!(i.generates_code && !i.links_executable && i.links_library);
    }

    #[test]
    fn response_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let rsp = dir.path().join("args.rsp");
        std::fs::write(&rsp, "-c \"my file.c\" -o x.o\n").unwrap();
        let i = classify(&[format!("@{}", rsp.display())]);
        assert!(i.generates_code && !i.links_executable);
    }

    #[test]
    fn no_inputs_links_nothing() {
        assert_eq!(classify_str("-v"), Invocation::default());
    }
}
