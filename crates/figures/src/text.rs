//! Text: the bundled font, how wide a string is, and where each glyph of
//! a PNG's text goes ([`glyph_offsets`]).
//!
//! Plotters draws the text. Its `ab_glyph` feature reads the bundled DejaVu
//! Sans with the `ab_glyph` crate; the glyph metrics here come from the same
//! crate reading the same bytes, so they are the ones plotters lays out by.

use ab_glyph::{Font as _, FontRef};
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

/// The bundled font as `ab_glyph` reads it; `None` only if it were corrupt.
fn font() -> Option<&'static FontRef<'static>> {
    static PARSED: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    PARSED
        .get_or_init(|| FontRef::try_from_slice(FONT).ok())
        .as_ref()
}

/// Where each glyph of `text` at font size `size` must be drawn, as the
/// pixel offset along the baseline of the glyph's own left edge.
///
/// This works around a bug in plotters' bitmap text (its `ab_glyph` font
/// backend, `FontDataInternal::draw` in `src/style/font/ab_glyph.rs`, as of
/// plotters 0.3.7 and its master of 2026-03): it draws each glyph's ink box
/// at the pen position, dropping the glyph's left side bearing
/// (`px_bounds().min.x`). A glyph with a wide bearing ("b", "h", "n") is
/// pulled left into the space before it, which squeezes "RTT behind" into
/// "RTTbehind". No upstream issue for this cause was found as of 2026-11;
/// plotters issue #576 ("Spacing between words removed",
/// <https://github.com/plotters-rs/plotters/issues/576>, open) reports the
/// same symptom but names neither a backend nor a cause.
///
/// Drawn one at a time at the pen position (plotters' own layout of the
/// prefix) plus the bearing, glyphs sit where the font puts them.
pub(crate) fn glyph_offsets(text: &str, size: f64) -> Vec<(usize, char, i32)> {
    let layout = ("sans-serif", size).into_font();
    // ab_glyph's pixel scale is the font's height (ascent − descent), not
    // its em: a size of `size` px makes that height `size` pixels.
    let scale = font().map_or(0.0, |f| size / f64::from(f.height_unscaled()));
    text.char_indices()
        .map(|(i, c)| {
            let pen = if i == 0 {
                0
            } else {
                layout.box_size(&text[..i]).map_or(0, |b| b.0 as i32)
            };
            let lsb = font().map_or(0.0, |f| {
                f64::from(f.h_side_bearing_unscaled(f.glyph_id(c))) * scale
            });
            (i, c, pen + lsb.floor() as i32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_font_has_dejavu_sans_metrics() {
        let f = font().expect("the bundled font parses");
        let units = |c: char| {
            let g = f.glyph_id(c);
            assert_ne!(g.0, 0, "{c:?} has a glyph");
            (f.h_advance_unscaled(g), f.h_side_bearing_unscaled(g))
        };
        // DejaVu Sans in font units: a 2048-unit em, ascender 1901 and
        // descender −483 (so ab_glyph's pixel scale is size / 2384).
        assert_eq!(f.units_per_em(), Some(2048.0));
        assert_eq!(
            (f.ascent_unscaled(), f.descent_unscaled()),
            (1901.0, -483.0)
        );
        assert_eq!(f.height_unscaled(), 2384.0);
        assert_eq!(units(' ').0, 651.0);
        assert_eq!(units('0').0, 1303.0);
        assert!(units('W').0 > 3.0 * units('i').0, "W is wide, i narrow");
        // "b" stands well clear of its pen position; "T" reaches back to it.
        assert!(units('b').1 > 100.0 && units('T').1 <= 0.0);
        // A glyph outside the Basic Multilingual Plane has its own metrics
        // (the font's format-12 cmap), not the missing glyph's.
        assert_ne!(f.glyph_id('\u{1D538}').0, 0);
    }

    #[test]
    fn font_metrics_agree_with_plotters_layout() {
        register();
        let f = font().unwrap();
        for text in ["RTT behind a full buffer", "bbr bw estimate", "0.001"] {
            let ours: f64 = text
                .chars()
                .map(|c| f64::from(f.h_advance_unscaled(f.glyph_id(c))))
                .sum::<f64>()
                * 13.0
                / f64::from(f.height_unscaled());
            let theirs = text_width(text, 13.0);
            // Kerning aside, within a pixel or two.
            assert!(
                (ours - f64::from(theirs)).abs() < 3.0,
                "{text}: {ours} vs {theirs}"
            );
        }
    }

    #[test]
    fn each_glyph_sits_at_the_pen_plus_its_bearing() {
        register();
        let offsets = glyph_offsets("T b", 13.0);
        let chars: Vec<char> = offsets.iter().map(|o| o.1).collect();
        assert_eq!(chars, ['T', ' ', 'b']);
        // "b" (a bearing of 186 units, 1.01 px at 13 px) starts a pixel
        // right of plotters' pen position, which is where plotters alone
        // would have put its ink.
        let pen_b = text_width("T ", 13.0);
        assert_eq!(offsets[2].2, pen_b + 1);
        // "T" (bearing −6 units) starts a pixel left of the text's origin.
        assert_eq!(offsets[0].2, -1);
        let digits = glyph_offsets("0123456789", 13.0);
        assert!(digits.windows(2).all(|w| w[1].2 > w[0].2));
    }
}
