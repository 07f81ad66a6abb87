//! Histogram encoding for the store: HdrHistogram's V2 + DEFLATE format, readable by its own tools.

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

pub fn encode_histogram(h: &Histogram<u64>) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| anyhow::anyhow!("cannot encode histogram: {e:?}"))?;
    Ok(buf)
}

pub fn decode_histogram(bytes: &[u8]) -> anyhow::Result<Histogram<u64>> {
    let mut cur = std::io::Cursor::new(bytes);
    Deserializer::new()
        .deserialize(&mut cur)
        .map_err(|e| anyhow::anyhow!("cannot decode histogram: {e:?}"))
}
