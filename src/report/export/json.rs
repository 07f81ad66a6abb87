//! `report.json`: the serialized model (schema in docs/report-json.md), redacted once more.

use super::{Exporter, Input, Sink};
use crate::report::loaded::safe;

pub struct Json;

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn write(&self, input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()> {
        let mut text = serde_json::to_string_pretty(input.model)?;
        text.push('\n');
        let text = safe(&text);
        sink.file("report.json", &mut |w| w.write_all(text.as_bytes()))
    }
}
