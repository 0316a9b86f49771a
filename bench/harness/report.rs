//! Output: the Markdown table people read, and the same rows as records (named,
//! typed fields) written as CSV or JSON so that runs can be compared.

use super::cli::Cli;
use std::fmt::Write as _;

/// A Markdown table. A column name starting with `>` is right-aligned.
pub struct Table {
    head: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(head: &[&'static str]) -> Table {
        Table {
            head: head.to_vec(),
            rows: Vec::new(),
        }
    }

    /// One row; `|` and line breaks in a cell would break the table and are replaced.
    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.head.len(), "one cell per column");
        self.rows.push(cells.iter().map(|c| cell(c)).collect());
    }

    pub fn markdown(&self) -> String {
        let line = |cells: Vec<&str>| format!("| {} |\n", cells.join(" | "));
        let mut s = line(
            self.head
                .iter()
                .map(|h| h.strip_prefix('>').unwrap_or(h))
                .collect(),
        );
        s += &line(
            self.head
                .iter()
                .map(|h| if h.starts_with('>') { "---:" } else { "---" })
                .collect(),
        );
        for r in &self.rows {
            s += &line(r.iter().map(String::as_str).collect());
        }
        s
    }
}

/// A cell's text with the characters that would break a Markdown row replaced.
pub fn cell(s: &str) -> String {
    s.replace('|', "/").replace('\n', " ")
}

/// A field of a record.
#[derive(Clone, Debug)]
pub enum Value {
    /// A measurement; None where not measured (CSV: empty, JSON: null).
    Num(Option<f64>),
    Count(Option<usize>),
    Text(String),
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Num(Some(x))
    }
}

impl From<Option<f64>> for Value {
    fn from(x: Option<f64>) -> Value {
        Value::Num(x)
    }
}

impl From<usize> for Value {
    fn from(x: usize) -> Value {
        Value::Count(Some(x))
    }
}

impl From<Option<usize>> for Value {
    fn from(x: Option<usize>) -> Value {
        Value::Count(x)
    }
}

/// One row as named fields, in column order; every record of a run has the same names.
pub type Record = Vec<(&'static str, Value)>;

/// CSV: a header line from the first record's names, then one line per record.
pub fn csv(records: &[Record]) -> String {
    let Some(first) = records.first() else {
        return String::new();
    };
    let mut s = first.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(",");
    s.push('\n');
    for r in records {
        let fields: Vec<String> = r
            .iter()
            .map(|(_, v)| match v {
                Value::Num(x) => x.map(|x| format!("{x:.6e}")).unwrap_or_default(),
                Value::Count(x) => x.map(|x| x.to_string()).unwrap_or_default(),
                Value::Text(t) if t.contains([',', '"', '\n']) => {
                    format!("\"{}\"", t.replace('"', "\"\""))
                }
                Value::Text(t) => t.clone(),
            })
            .collect();
        s += &fields.join(",");
        s.push('\n');
    }
    s
}

/// JSON, one line: `{"bench": …, "args": […], "unix_time_s": …, "rows": [{…}, …]}`.
pub fn json(bench: &str, args: &[String], records: &[Record]) -> String {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let args: Vec<String> = args.iter().map(|a| json_str(a)).collect();
    let rows: Vec<String> = records
        .iter()
        .map(|r| {
            let fields: Vec<String> = r
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::Num(Some(x)) if x.is_finite() => format!("{x:e}"),
                        Value::Count(Some(x)) => x.to_string(),
                        Value::Text(t) => json_str(t),
                        _ => "null".into(),
                    };
                    format!("{}:{v}", json_str(k))
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        })
        .collect();
    format!(
        "{{\"bench\":{},\"args\":[{}],\"unix_time_s\":{unix},\"rows\":[{}]}}",
        json_str(bench),
        args.join(","),
        rows.join(",")
    )
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes the records where `--json` and `--csv` asked (JSON to standard output: one
/// line, after everything else).
pub fn write_records(cli: &Cli, bench: &str, records: &[Record]) {
    let write = |path: &str, text: String| match std::fs::write(path, text) {
        Ok(()) => eprintln!("wrote {path}"),
        Err(e) => eprintln!("error: could not write {path}: {e}"),
    };
    if let Some(path) = &cli.csv {
        write(path, csv(records));
    }
    match cli.json.as_deref() {
        Some("-") => println!("{}", json(bench, cli.args(), records)),
        Some(path) => write(path, json(bench, cli.args(), records) + "\n"),
        None => {}
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(x: usize) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Milliseconds with about four significant digits.
pub fn fmt_ms(ms: f64) -> String {
    if ms < 1.0 {
        format!("{ms:.4}")
    } else if ms < 100.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.1}")
    }
}

/// `—` where there is no value.
pub fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}
