//! The arguments of `instrument top`, which the text and the full-screen views both read.

#[derive(clap::Args)]
pub struct TopArgs {
    /// The process id of a running instrumented program (yours)
    pub pid: u32,
    /// Seconds between updates
    #[arg(long, default_value_t = 1.0, value_parser = parse_interval)]
    pub interval: f64,
    /// Print N updates as text and exit (or stop when the program ends), instead of the
    /// full-screen view
    #[arg(long, value_name = "N")]
    pub batch: Option<u32>,
    /// With --batch: one JSON object per update
    #[arg(long, requires = "batch")]
    pub json: bool,
    /// Rows per update (default: as many as the terminal holds; 20 with --batch)
    #[arg(long)]
    pub rows: Option<usize>,
    /// Only routines (no loops or call statements)
    #[arg(long)]
    pub routines: bool,
    /// Switch off the probes of these routines (names or TAU-style wildcards such as 'std::*'),
    /// with their loops and call statements, or of one loop or call statement by the name top
    /// shows; then exit. Calls already open finish measured; new calls are counted untimed until
    /// none is open, then not at all.
    #[arg(long, value_name = "NAME")]
    pub off: Vec<String>,
    /// Switch these probes on again; then exit
    #[arg(long, value_name = "NAME")]
    pub on: Vec<String>,
}

fn parse_interval(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.05..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!("{text:?} is not a number of seconds between 0.05 and 3600")),
    }
}
