//! Helpers for adapters that read a tool's JSON report (fio, iperf3): the report is found whole or
//! the parse fails, and every figure is a JSON number or the parse fails naming it.

use super::ParseError;
use serde_json::Value;

/// The JSON report: the last of the objects that follow one another from the first line beginning
/// with `{` (a tool may print notes before it; fio with `--status-interval` prints an object per
/// interval, and the last is the final report). `Ok(None)` when there is none; an error when one is
/// cut short or malformed. Text after the last object that is not JSON ends the report.
pub fn document(text: &str) -> Result<Option<Value>, String> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with('{') {
            let mut last = None;
            for v in serde_json::Deserializer::from_str(&text[offset..]).into_iter::<Value>() {
                match v {
                    Ok(v) if v.is_object() => last = Some(v),
                    Err(e) if e.is_eof() || last.is_none() => return Err(e.to_string()),
                    _ => break,
                }
            }
            return Ok(last);
        }
        offset += line.len();
    }
    Ok(None)
}

/// A tool's JSON report, for messages naming the tool and the field.
#[derive(Clone, Copy)]
pub struct Report<'a> {
    pub tool: &'static str,
    pub text: &'a str,
}

impl<'a> Report<'a> {
    pub fn new(tool: &'static str, text: &'a str) -> Self {
        Report { tool, text }
    }

    /// The failure for field `path` holding `value`, which is not a number.
    pub fn bad(&self, path: &str, value: &Value) -> ParseError {
        ParseError::with_raw(
            format!(
                "{}: `{path}` is not a number: {}",
                self.tool,
                super::text::excerpt(&value.to_string())
            ),
            self.text,
        )
    }

    /// The failure for a field the report lacks.
    pub fn missing(&self, path: &str) -> ParseError {
        ParseError::with_raw(format!("{}: the JSON report has no `{path}`", self.tool), self.text)
    }

    /// Field `key` of `v` (`path` names it in messages): None when absent, an error when it is
    /// there and not a number (`null`, `"n/a"`).
    pub fn num(&self, v: &Value, key: &str, path: &str) -> Result<Option<f64>, ParseError> {
        match v.get(key) {
            None => Ok(None),
            Some(x) => x.as_f64().map(Some).ok_or_else(|| self.bad(&format!("{path}.{key}"), x)),
        }
    }

    /// As [`Report::num`], and a missing field is an error too.
    pub fn need(&self, v: &Value, key: &str, path: &str) -> Result<f64, ParseError> {
        self.num(v, key, path)?.ok_or_else(|| self.missing(&format!("{path}.{key}")))
    }
}
