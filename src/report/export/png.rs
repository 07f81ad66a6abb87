//! `--format png`: every chart also as `charts/<name>.png`, rasterized from the SVG that the
//! Markdown and HTML reports link, in pure Rust (`resvg`). The text is drawn with one font built
//! into the binary (DejaVu Sans, licence in `assets/fonts/`), so the PNGs read the same on every
//! machine and need no system fonts.

use super::{Exporter, Input, Sink};
use anyhow::Context;
use resvg::{tiny_skia, usvg};
use std::sync::{Arc, OnceLock};

/// DejaVu Sans (Bitstream Vera licence, see `assets/fonts/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

pub struct Png;

impl Exporter for Png {
    fn name(&self) -> &'static str {
        "png"
    }

    fn report_file(&self) -> bool {
        false
    }

    fn by_default(&self) -> bool {
        false
    }

    fn write(&self, input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()> {
        // One chart at a time: drawn, written, dropped.
        for (name, svg) in input.charts {
            let png = render(svg).with_context(|| format!("cannot draw chart {name} as PNG"))?;
            sink.file(&format!("charts/{}.png", name.trim_end_matches(".svg")), &mut |w| w.write_all(&png))?;
        }
        Ok(())
    }
}

/// The font database every chart shares: the built-in font, the family of every generic name.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        let family = "DejaVu Sans";
        db.set_sans_serif_family(family);
        db.set_serif_family(family);
        db.set_monospace_family(family);
        db.set_cursive_family(family);
        db.set_fantasy_family(family);
        Arc::new(db)
    })
    .clone()
}

/// One SVG as PNG bytes, at its own size, on a white background.
pub fn render(svg: &str) -> anyhow::Result<Vec<u8>> {
    let opt = usvg::Options {
        font_family: "DejaVu Sans".into(),
        fontdb: fonts(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| anyhow::anyhow!("the SVG does not parse: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow::anyhow!("the chart has no area ({}x{})", size.width(), size.height()))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| anyhow::anyhow!("cannot encode the PNG: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_svg_with_text_becomes_a_png_with_ink() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">
<text x="5" y="28" font-family="sans-serif" font-size="24" fill="#000000">p99 ms</text></svg>"##;
        let png = render(svg).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let img = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((img.width(), img.height()), (120, 40));
        let dark = img.pixels().iter().filter(|p| p.red() < 128).count();
        assert!(dark > 50, "the text is drawn with the built-in font: {dark} dark pixels");
    }
}
