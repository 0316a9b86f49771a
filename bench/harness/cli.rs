//! Command-line flags. A bench reads its own flags with `next_flag`/`value`/`count`…;
//! the flags every bench takes are handled here:
//!
//! - `--bench`: passed by `cargo bench` (not by `cargo test --benches`), see `Cli::bench`;
//! - `--json FILE` (`--json` or `--json -`: standard output) and `--csv FILE`: the rows;
//! - `-h`, `--help`: the bench's usage text;
//! - a bare word (`cargo bench NAME` passes NAME to every bench target) is ignored.
//!
//! `--flag=value` is accepted as well as `--flag value`.

use std::collections::VecDeque;
use std::str::FromStr;

/// The usage lines of the flags `Cli` handles, shown after the bench's own.
const COMMON_USAGE: &str = "\
options of every bench:
  --json [FILE]    also write the rows as JSON to FILE (`-` or none: standard output,
                   as the last line)
  --csv FILE       also write the rows as CSV
  -h, --help       this text";

pub struct Cli {
    all: Vec<String>,
    rest: VecDeque<String>,
    /// The value given inline (`--flag=value`) to the flag last returned.
    inline: Option<String>,
    usage: &'static str,
    /// `--bench` was given anywhere (so defaults may depend on it before parsing).
    pub bench: bool,
    /// Where `--json` writes the rows: a path, or `-` for standard output.
    pub json: Option<String>,
    /// Where `--csv` writes the rows.
    pub csv: Option<String>,
}

impl Cli {
    pub fn from_env(usage: &'static str) -> Cli {
        let all: Vec<String> = std::env::args().skip(1).collect();
        Cli {
            bench: all.iter().any(|a| a == "--bench"),
            rest: all.iter().cloned().collect(),
            all,
            inline: None,
            usage,
            json: None,
            csv: None,
        }
    }

    /// The arguments as given, for the JSON record of the run.
    pub fn args(&self) -> &[String] {
        &self.all
    }

    /// The next flag that is the bench's own, or None at the end.
    pub fn next_flag(&mut self) -> Result<Option<String>, String> {
        while let Some(arg) = self.rest.pop_front() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
                _ => (arg, None),
            };
            self.inline = inline;
            match flag.as_str() {
                "--bench" => {}
                "-h" | "--help" => {
                    println!("{}", self.usage_text());
                    std::process::exit(0);
                }
                "--json" => {
                    let next_is_value = self
                        .rest
                        .front()
                        .is_some_and(|v| v == "-" || !v.starts_with('-'));
                    self.json = Some(match self.inline.take() {
                        Some(v) => v,
                        None if next_is_value => self.rest.pop_front().unwrap(),
                        None => "-".into(),
                    });
                }
                "--csv" => self.csv = Some(self.value("--csv")?),
                f if f.starts_with('-') => return Ok(Some(flag)),
                other => eprintln!("note: ignoring the argument {other:?}"),
            }
        }
        Ok(None)
    }

    /// The value of `flag` (inline or the next argument).
    pub fn value(&mut self, flag: &str) -> Result<String, String> {
        self.inline
            .take()
            .or_else(|| self.rest.pop_front())
            .ok_or_else(|| format!("{flag} needs a value"))
    }

    pub fn number<T: FromStr>(&mut self, flag: &str) -> Result<T, String> {
        let s = self.value(flag)?;
        s.trim()
            .replace('_', "")
            .parse()
            .map_err(|_| format!("{flag}: {s:?} is not a valid number"))
    }

    /// A count ≥ 0, also written as a float (`1e4`).
    pub fn count(&mut self, flag: &str) -> Result<usize, String> {
        let x: f64 = self.number(flag)?;
        if x.is_finite() && x >= 0.0 && x.fract() == 0.0 {
            Ok(x as usize)
        } else {
            Err(format!("{flag}: {x} is not a count ≥ 0"))
        }
    }

    /// A comma-separated list, items trimmed, empty items dropped.
    pub fn list(&mut self, flag: &str) -> Result<Vec<String>, String> {
        Ok(self
            .value(flag)?
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// The message for a flag the bench does not know.
    pub fn unknown(&self, flag: &str) -> String {
        format!("unknown option {flag}")
    }

    fn usage_text(&self) -> String {
        format!("{}\n\n{COMMON_USAGE}", self.usage)
    }

    /// The bench's configuration, or exit 2 with the error and the usage text.
    pub fn or_exit<T>(&self, parsed: Result<T, String>) -> T {
        parsed.unwrap_or_else(|e| {
            eprintln!("error: {e}\n\n{}", self.usage_text());
            std::process::exit(2);
        })
    }
}
