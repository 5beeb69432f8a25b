//! Text: the bundled font, how wide a string is, and where each glyph of
//! a PNG's text goes ([`glyph_offsets`]).

use plotters::style::{register_font, FontStyle, IntoFont};
use std::sync::{Once, OnceLock};

/// DejaVu Sans (its licence is in `assets/`), so no system fonts are needed.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Tick labels and legend text, in pixels (plotters' font size).
pub(crate) const LABEL_FONT: f64 = 13.0;
/// Axis descriptions.
pub(crate) const DESC_FONT: f64 = 14.0;
/// The title.
pub(crate) const TITLE_FONT: f64 = 17.0;

/// Registers the bundled font with plotters as "sans-serif" (once).
pub(crate) fn register() {
    REGISTER.call_once(|| {
        // The bundled font is valid; registration only fails on a corrupt file.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// The width of `text` at font size `size` in pixels, as plotters lays it
/// out (advances and kerning).
pub(crate) fn text_width(text: &str, size: f64) -> i32 {
    register();
    ("sans-serif", size)
        .into_font()
        .box_size(text)
        .map_or(text.chars().count() as i32 * (size * 0.6) as i32, |b| {
            b.0 as i32
        })
}

/// Metrics read from the bundled font's tables: plotters does not expose
/// its font, and its bitmap text needs each glyph's left side bearing.
struct FontMetrics {
    /// Ascender − descender in font units: ab_glyph's pixel-size unit.
    height: f64,
    cmap: Vec<(u16, u16, i16, usize)>,
    data: &'static [u8],
    hmtx: usize,
    n_hmetrics: usize,
}

fn be_u16(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(o)?, *d.get(o + 1)?]))
}

fn be_u32(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(o..o + 4)?.try_into().ok()?))
}

impl FontMetrics {
    fn parse(d: &'static [u8]) -> Option<FontMetrics> {
        let n = usize::from(be_u16(d, 4)?);
        let table = |tag: &[u8; 4]| {
            (0..n).find_map(|i| {
                let r = 12 + 16 * i;
                (d.get(r..r + 4)? == tag).then(|| be_u32(d, r + 8))?
            })
        };
        let hhea = table(b"hhea")? as usize;
        let hmtx = table(b"hmtx")? as usize;
        let cmap = table(b"cmap")? as usize;
        let ascender = be_u16(d, hhea + 4)? as i16;
        let descender = be_u16(d, hhea + 6)? as i16;
        let n_hmetrics = usize::from(be_u16(d, hhea + 34)?);
        // A Unicode BMP subtable in format 4.
        let subtables = usize::from(be_u16(d, cmap + 2)?);
        let sub = (0..subtables).find_map(|i| {
            let r = cmap + 4 + 8 * i;
            let (platform, encoding) = (be_u16(d, r)?, be_u16(d, r + 2)?);
            let off = cmap + be_u32(d, r + 4)? as usize;
            let unicode = (platform == 3 && encoding == 1) || platform == 0;
            (unicode && be_u16(d, off)? == 4).then_some(off)
        })?;
        let segs = usize::from(be_u16(d, sub + 6)? / 2);
        let ends = sub + 14;
        let starts = ends + 2 * segs + 2;
        let deltas = starts + 2 * segs;
        let ros = deltas + 2 * segs;
        let mut segments = Vec::with_capacity(segs);
        for i in 0..segs {
            segments.push((
                be_u16(d, starts + 2 * i)?,
                be_u16(d, ends + 2 * i)?,
                be_u16(d, deltas + 2 * i)? as i16,
                ros + 2 * i,
            ));
        }
        Some(FontMetrics {
            height: f64::from(ascender) - f64::from(descender),
            cmap: segments,
            data: d,
            hmtx,
            n_hmetrics,
        })
    }

    fn glyph(&self, c: char) -> u16 {
        let c = u32::from(c);
        if c > 0xFFFF {
            return 0;
        }
        let c = c as u16;
        for &(start, end, delta, ro_at) in &self.cmap {
            if c > end {
                continue;
            }
            if c < start {
                return 0;
            }
            let ro = be_u16(self.data, ro_at).unwrap_or(0);
            if ro == 0 {
                return (c as i16).wrapping_add(delta) as u16;
            }
            let at = ro_at + usize::from(ro) + 2 * usize::from(c - start);
            return match be_u16(self.data, at) {
                Some(0) | None => 0,
                Some(g) => (g as i16).wrapping_add(delta) as u16,
            };
        }
        0
    }

    /// Left side bearing of `c`'s glyph, in font units.
    fn lsb(&self, c: char) -> i16 {
        let g = usize::from(self.glyph(c));
        let at = if g < self.n_hmetrics {
            self.hmtx + 4 * g + 2
        } else {
            self.hmtx + 4 * self.n_hmetrics + 2 * (g - self.n_hmetrics)
        };
        be_u16(self.data, at).map_or(0, |v| v as i16)
    }

    /// Advance width of `c`'s glyph, in font units.
    #[cfg(test)]
    fn advance(&self, c: char) -> u16 {
        let g = usize::from(self.glyph(c)).min(self.n_hmetrics.saturating_sub(1));
        be_u16(self.data, self.hmtx + 4 * g).unwrap_or(0)
    }
}

fn metrics() -> Option<&'static FontMetrics> {
    static METRICS: OnceLock<Option<FontMetrics>> = OnceLock::new();
    METRICS.get_or_init(|| FontMetrics::parse(FONT)).as_ref()
}

/// Where each glyph of `text` at font size `size` must be drawn, as the
/// pixel offset along the baseline of the glyph's own left edge.
///
/// Plotters' bitmap text (ab_glyph) draws each glyph's ink box at the pen
/// position, dropping the glyph's left side bearing: a glyph with a wide
/// bearing ("b", "h", "n") is pulled left into the space before it, which
/// squeezes "RTT behind" into "RTTbehind". Drawn one at a time at the pen
/// position (plotters' own layout of the prefix) plus the bearing, glyphs
/// sit where the font puts them.
pub(crate) fn glyph_offsets(text: &str, size: f64) -> Vec<(usize, char, i32)> {
    let font = ("sans-serif", size).into_font();
    let scale = metrics().map_or(0.0, |m| size / m.height);
    text.char_indices()
        .map(|(i, c)| {
            let pen = if i == 0 {
                0
            } else {
                font.box_size(&text[..i]).map_or(0, |b| b.0 as i32)
            };
            let lsb = metrics().map_or(0.0, |m| f64::from(m.lsb(c)) * scale);
            (i, c, pen + lsb.floor() as i32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn font_metrics_agree_with_plotters_layout() {
        register();
        let m = metrics().expect("the bundled font parses");
        assert_eq!(m.advance(' '), 651);
        assert!(m.lsb('b') > 100 && m.lsb('T') <= 0);
        for text in ["RTT behind a full buffer", "bbr bw estimate", "0.001"] {
            let ours: f64 =
                text.chars().map(|c| f64::from(m.advance(c))).sum::<f64>() * 13.0 / m.height;
            let theirs = ("sans-serif", 13.0).into_font().box_size(text).unwrap().0;
            // Kerning aside, within a pixel or two.
            assert!(
                (ours - f64::from(theirs)).abs() < 3.0,
                "{text}: {ours} vs {theirs}"
            );
        }
    }
}
