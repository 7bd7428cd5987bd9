//! `instrument demo`: builds the bundled C example with `instrument-cc`, runs it, and prints its
//! profile: the whole product in one command, as a newcomer first sees it. Every call is timed
//! (throttling off, as the printed command line says), so the table shows the full picture.

use anyhow::{bail, Context, Result};
use instrument_contract::settings;
use instrument_report::{profiles, report};
use instrument_toolchain::layout;
use std::process::Command;

const DEMO_SOURCE: &str = include_str!("../../c-fixtures/demo/demo.c");

pub fn run() -> Result<()> {
    let work = tempfile::Builder::new()
        .prefix("instrument-demo")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let source = work.path().join("demo.c");
    std::fs::write(&source, DEMO_SOURCE)?;
    let program = work.path().join("demo");
    let cc = layout::sibling("instrument-cc")?;
    println!("$ instrument-cc -O2 -g demo.c -o demo");
    let status = Command::new(&cc)
        .args(["-O2", "-g"])
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .status()
        .context("cannot run instrument-cc")?;
    if !status.success() {
        bail!("building the demo failed ({status})");
    }
    println!("$ INSTRUMENT_THROTTLE=0 ./demo");
    let status = Command::new(&program)
        .env(settings::PROFILE_DIR.name, work.path())
        .env(settings::THROTTLE.name, "0")
        .status()
        .context("cannot run the demo program")?;
    if !status.success() {
        bail!("the demo program failed ({status})");
    }
    let profile_path = profiles::newest(work.path())?;
    println!("$ instrument report\n");
    print!("{}", report::table(&profiles::load(&profile_path)?, false, instrument_report::view::View::Raw));
    Ok(())
}
