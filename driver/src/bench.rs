//! `instrument bench probes`: placeholder replaced below.
pub struct Settings {
    pub json: bool,
    pub repeat: u32,
    pub scale: f64,
}
pub fn probes(_s: &Settings) -> anyhow::Result<()> {
    anyhow::bail!("not yet")
}
