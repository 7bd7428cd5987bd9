//! An experiment's results (the paper's Table 1 and 2): the data the runner's statistics fill
//! in (`results`), their intervals (`interval`) and their text and files (`output`), which the
//! HTML page draws too. The runner itself is the CLI's (`instrument experiment`).

pub mod interval;
pub mod output;
pub mod results;
