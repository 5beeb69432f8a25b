//! Drawing a laid-out figure with plotters: the SVG (the data in a group
//! clipped to the plotting area) and the PNG (the data drawn into a bitmap
//! of the plotting area's size, and text set glyph by glyph), and the
//! public entry points [`figure`] and [`figure_with_bands`].

use crate::figure::{Band, Figure};
use crate::frame::Frame;
use crate::layer::Layer;
use crate::layout::{plan, Plan};
use crate::legend::{Key, LEGEND_ROW};
use crate::text::{glyph_offsets, register, text_width, DESC_FONT, LABEL_FONT, TITLE_FONT};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;
use std::fs;
use std::path::Path;

/// How text is set: whole strings (SVG: the browser sets them) or glyph by
/// glyph at the font's true positions (PNG; see [`glyph_offsets`]).
#[derive(Clone, Copy, PartialEq)]
enum TextMode {
    Whole,
    Glyphs,
}

type DrawResult = Result<(), String>;

/// Maps a backend error to the crate's error text for drawing `what`.
fn fail<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("drawing `{what}`: {e:?}")
}

/// Draws `text` anchored at `pos` (`h`, `v` say which point of the text
/// `pos` is), rotated a quarter turn anticlockwise if `vertical`.
#[allow(clippy::too_many_arguments)]
fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    mode: TextMode,
    text: &str,
    pos: (i32, i32),
    size: f64,
    (h, v): (HPos, VPos),
    vertical: bool,
    what: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let mut style = TextStyle::from(("sans-serif", size).into_font()).color(&BLACK);
    if vertical {
        style = style.transform(FontTransform::Rotate270);
    }
    if mode == TextMode::Whole {
        // Plotters writes an SVG font-size of size / 1.24, a smaller em
        // than the PNG's (size / 1.164 for DejaVu's ascender − descender
        // of 2384 units per 2048-unit em); match the PNG, so a browser
        // sets the text as wide as the layout assumed.
        let style = TextStyle::from(("sans-serif", size * 1.065).into_font())
            .color(&BLACK)
            .transform(if vertical {
                FontTransform::Rotate270
            } else {
                FontTransform::None
            });
        return area
            .draw(&Text::new(text, pos, style.pos(Pos::new(h, v))))
            .map_err(fail(what));
    }
    let width = text_width(text, size);
    let shift = match h {
        HPos::Left => 0,
        HPos::Center => -width / 2,
        HPos::Right => -width,
    };
    let style = style.pos(Pos::new(HPos::Left, v));
    for (i, c, off) in glyph_offsets(text, size) {
        if c == ' ' {
            continue;
        }
        let along = shift + off;
        let at = if vertical {
            (pos.0, pos.1 - along)
        } else {
            (pos.0 + along, pos.1)
        };
        let glyph = &text[i..i + c.len_utf8()];
        area.draw(&Text::new(glyph, at, style.clone()))
            .map_err(fail(what))?;
    }
    Ok(())
}

/// A point in axis space to whole pixels relative to `origin`.
fn to_px(frame: &Frame, p: (f64, f64), origin: (i32, i32)) -> (i32, i32) {
    let (x, y) = frame.px_t(p);
    (x.round() as i32 - origin.0, y.round() as i32 - origin.1)
}

/// Background, title and grid: what lies under the data.
fn draw_under<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    plan: &Plan,
    mode: TextMode,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let what = plan.title.as_str();
    area.fill(&WHITE).map_err(fail(what))?;
    let f = &plan.frame;
    draw_text(
        area,
        mode,
        &plan.title,
        ((f.left + f.right) / 2, 12),
        TITLE_FONT,
        (HPos::Center, VPos::Top),
        false,
        what,
    )?;
    let light = RGBColor(236, 236, 236);
    let bold = RGBColor(205, 205, 205);
    let grid = |x: Option<f64>, y: Option<f64>, colour: RGBColor| -> DrawResult {
        let line = match (x, y) {
            (Some(x), _) => {
                let Some(t) = f.x.t(x) else { return Ok(()) };
                let (px, _) = f.px_t((t, f.t_rect().2));
                let px = px.round() as i32;
                [(px, f.top), (px, f.bottom)]
            }
            (_, Some(y)) => {
                let Some(t) = f.y.t(y) else { return Ok(()) };
                let (_, py) = f.px_t((f.t_rect().0, t));
                let py = py.round() as i32;
                [(f.left, py), (f.right, py)]
            }
            _ => return Ok(()),
        };
        area.draw(&PathElement::new(line.to_vec(), colour))
            .map_err(fail(what))
    };
    for &v in &plan.xs.minor {
        grid(Some(v), None, light)?;
    }
    for &v in &plan.ys.minor {
        grid(None, Some(v), light)?;
    }
    for t in &plan.xs.ticks {
        grid(Some(t.value), None, bold)?;
    }
    for t in &plan.ys.ticks {
        grid(None, Some(t.value), bold)?;
    }
    Ok(())
}

/// The data, in pixels relative to `origin`. `segments`: draw each line
/// segment on its own, so that wide strokes get no miter spikes (plotters'
/// bitmap joins of a reversing line reach far past the data).
fn draw_layers<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    plan: &Plan,
    origin: (i32, i32),
    segments: bool,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let what = plan.title.as_str();
    let f = &plan.frame;
    let px = |p: (f64, f64)| to_px(f, p, origin);
    for layer in &plan.layers {
        match layer {
            Layer::Fill(colour, poly) => {
                let pts: Vec<(i32, i32)> = poly.iter().map(|&p| px(p)).collect();
                area.draw(&Polygon::new(pts, colour.mix(0.18).filled()))
                    .map_err(fail(what))?;
            }
            Layer::Line(colour, pts) => {
                let mut pts: Vec<(i32, i32)> = pts.iter().map(|&p| px(p)).collect();
                pts.dedup();
                if pts.len() == 1 {
                    pts.push(pts[0]);
                }
                let style = colour.stroke_width(2);
                if segments {
                    for w in pts.windows(2) {
                        area.draw(&PathElement::new(vec![w[0], w[1]], style))
                            .map_err(fail(what))?;
                    }
                } else {
                    area.draw(&PathElement::new(pts, style))
                        .map_err(fail(what))?;
                }
            }
            Layer::Dot(colour, p) => {
                area.draw(&Circle::new(px(*p), 3, colour.filled()))
                    .map_err(fail(what))?;
            }
            Layer::ErrorBar(colour, a, b) => {
                let (a, b) = (px(*a), px(*b));
                let style = colour.stroke_width(1);
                area.draw(&PathElement::new(vec![a, b], style))
                    .map_err(fail(what))?;
                let across_x = (b.0 - a.0).abs() > (b.1 - a.1).abs();
                for (x, y) in [a, b] {
                    let cap = if across_x {
                        vec![(x, y - 4), (x, y + 4)]
                    } else {
                        vec![(x - 4, y), (x + 4, y)]
                    };
                    area.draw(&PathElement::new(cap, style))
                        .map_err(fail(what))?;
                }
            }
            Layer::Published(p) => {
                area.draw(&TriangleMarker::new(px(*p), 7, BLACK.stroke_width(2)))
                    .map_err(fail(what))?;
            }
        }
    }
    Ok(())
}

/// Axes, tick labels, axis descriptions and the legend: what lies over
/// the data.
fn draw_over<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    plan: &Plan,
    mode: TextMode,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let what = plan.title.as_str();
    let f = &plan.frame;
    let axis = BLACK.stroke_width(1);
    area.draw(&PathElement::new(
        vec![(f.left, f.top), (f.left, f.bottom), (f.right, f.bottom)],
        axis,
    ))
    .map_err(fail(what))?;
    let (tx0, _, ty0, _) = f.t_rect();
    for t in &plan.xs.ticks {
        let Some(v) = f.x.t(t.value) else { continue };
        let x = f.px_t((v, ty0)).0.round() as i32;
        area.draw(&PathElement::new(
            vec![(x, f.bottom), (x, f.bottom + 5)],
            axis,
        ))
        .map_err(fail(what))?;
        draw_text(
            area,
            mode,
            &t.label,
            (x, f.bottom + 8),
            LABEL_FONT,
            (HPos::Center, VPos::Top),
            false,
            what,
        )?;
    }
    for t in &plan.ys.ticks {
        let Some(v) = f.y.t(t.value) else { continue };
        let y = f.px_t((tx0, v)).1.round() as i32;
        area.draw(&PathElement::new(vec![(f.left - 5, y), (f.left, y)], axis))
            .map_err(fail(what))?;
        draw_text(
            area,
            mode,
            &t.label,
            (f.left - 8, y),
            LABEL_FONT,
            (HPos::Right, VPos::Center),
            false,
            what,
        )?;
    }
    draw_text(
        area,
        mode,
        &plan.x_label,
        ((f.left + f.right) / 2, f.bottom + 30),
        DESC_FONT,
        (HPos::Center, VPos::Top),
        false,
        what,
    )?;
    draw_text(
        area,
        mode,
        &plan.y_label,
        (14, (f.top + f.bottom) / 2),
        DESC_FONT,
        (HPos::Center, VPos::Top),
        true,
        what,
    )?;
    if let Some(((x, y), (w, h))) = plan.legend_box {
        area.draw(&Rectangle::new(
            [(x, y), (x + w, y + h)],
            WHITE.mix(0.92).filled(),
        ))
        .map_err(fail(what))?;
        area.draw(&Rectangle::new(
            [(x, y), (x + w, y + h)],
            RGBColor(120, 120, 120),
        ))
        .map_err(fail(what))?;
        for (i, (key, label)) in plan.legend.iter().enumerate() {
            let cy = y + 4 + LEGEND_ROW * i as i32 + LEGEND_ROW / 2;
            let (k0, k1) = (x + 8, x + 30);
            match *key {
                Key::Line(c) => area
                    .draw(&PathElement::new(
                        vec![(k0, cy), (k1, cy)],
                        c.stroke_width(2),
                    ))
                    .map_err(fail(what))?,
                Key::Dot(c) => area
                    .draw(&Circle::new(((k0 + k1) / 2, cy), 4, c.filled()))
                    .map_err(fail(what))?,
                Key::Band(c) => {
                    area.draw(&Rectangle::new(
                        [(k0, cy - 5), (k1, cy + 5)],
                        c.mix(0.18).filled(),
                    ))
                    .map_err(fail(what))?;
                    area.draw(&PathElement::new(
                        vec![(k0, cy), (k1, cy)],
                        c.stroke_width(2),
                    ))
                    .map_err(fail(what))?;
                }
                Key::Published => area
                    .draw(&TriangleMarker::new(
                        ((k0 + k1) / 2, cy),
                        6,
                        BLACK.stroke_width(2),
                    ))
                    .map_err(fail(what))?,
            }
            draw_text(
                area,
                mode,
                label,
                (x + 38, cy),
                LABEL_FONT,
                (HPos::Left, VPos::Center),
                false,
                what,
            )?;
        }
    }
    Ok(())
}

/// The SVG document's body: everything between its `<svg>` and `</svg>`.
fn svg_body(doc: &str) -> &str {
    let start = doc.find('>').map_or(0, |i| i + 1);
    let end = doc.rfind("</svg>").unwrap_or(doc.len());
    doc.get(start..end).unwrap_or("")
}

/// The figure as an SVG document: the data in a group clipped to the
/// plotting area.
fn render_svg(plan: &Plan) -> Result<String, String> {
    let what = plan.title.as_str();
    let pass = |f: &dyn Fn(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> DrawResult| {
        let mut s = String::new();
        {
            let area = SVGBackend::with_string(&mut s, plan.size).into_drawing_area();
            f(&area)?;
            area.present().map_err(fail(what))?;
        }
        Ok::<String, String>(s)
    };
    let under = pass(&|a| draw_under(a, plan, TextMode::Whole))?;
    let data = pass(&|a| draw_layers(a, plan, (0, 0), false))?;
    let over = pass(&|a| draw_over(a, plan, TextMode::Whole))?;
    let f = &plan.frame;
    let head_end = under.find('>').map_or(0, |i| i + 1);
    Ok(format!(
        "{}{}<clipPath id=\"plot-area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>\n<g clip-path=\"url(#plot-area)\">{}</g>\n{}</svg>\n",
        &under[..head_end],
        svg_body(&under),
        f.left,
        f.top,
        f.right - f.left + 1,
        f.bottom - f.top + 1,
        svg_body(&data),
        svg_body(&over),
    ))
}

/// The figure as an RGB bitmap: the data drawn into a bitmap of the
/// plotting area's size (so nothing can leave it), copied over the grid.
fn render_png(plan: &Plan) -> Result<Vec<u8>, String> {
    let what = plan.title.as_str();
    let (w, h) = plan.size;
    let mut buf = vec![255u8; w as usize * h as usize * 3];
    {
        let area = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_under(&area, plan, TextMode::Glyphs)?;
        area.present().map_err(fail(what))?;
    }
    let f = &plan.frame;
    // The plotting area, edges inclusive, clamped to the canvas.
    let (x0, y0) = (f.left.max(0) as usize, f.top.max(0) as usize);
    let x1 = (f.right + 1).clamp(0, w as i32) as usize;
    let y1 = (f.bottom + 1).clamp(0, h as i32) as usize;
    if x1 > x0 && y1 > y0 {
        let (pw, ph) = (x1 - x0, y1 - y0);
        let mut sub = vec![0u8; pw * ph * 3];
        for r in 0..ph {
            let from = ((y0 + r) * w as usize + x0) * 3;
            sub[r * pw * 3..(r + 1) * pw * 3].copy_from_slice(&buf[from..from + pw * 3]);
        }
        {
            let area =
                BitMapBackend::with_buffer(&mut sub, (pw as u32, ph as u32)).into_drawing_area();
            draw_layers(&area, plan, (x0 as i32, y0 as i32), true)?;
            area.present().map_err(fail(what))?;
        }
        for r in 0..ph {
            let to = ((y0 + r) * w as usize + x0) * 3;
            buf[to..to + pw * 3].copy_from_slice(&sub[r * pw * 3..(r + 1) * pw * 3]);
        }
    }
    {
        let area = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_over(&area, plan, TextMode::Glyphs)?;
        area.present().map_err(fail(what))?;
    }
    Ok(buf)
}

pub(crate) fn write_figure(plan: &Plan, stem: &Path) -> DrawResult {
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    let what = plan.title.as_str();
    fs::write(&svg, render_svg(plan)?)
        .map_err(|e| format!("cannot write {}: {e}", svg.display()))?;
    let pixels = render_png(plan)?;
    let mut backend = BitMapBackend::new(&png, plan.size);
    backend
        .blit_bitmap((0, 0), plan.size, &pixels)
        .map_err(fail(what))?;
    backend.present().map_err(fail(what))?;
    Ok(())
}

/// Draws a report figure as SVG and PNG.
pub fn figure(figure: &Figure<'_>) -> Result<(), String> {
    figure_with_bands(figure, &[])
}

/// Draws a scatter plot as SVG and PNG: each of the figure's series is a
/// set of points in its own colour (a legend entry per labelled series),
/// not joined by lines. `reverse_x` runs the x axis from high to low, as
/// Pantheon draws delay so that better lies up and to the right.
///
/// `spreads` adds whiskers across groups of points (see
/// [`Spread`](crate::Spread)).
pub fn scatter(
    figure: &Figure<'_>,
    reverse_x: bool,
    spreads: &[crate::figure::Spread],
) -> Result<(), String> {
    register();
    let opts = crate::layout::Options {
        dots: true,
        reverse_x,
    };
    let mut plan = crate::layout::plan_with(figure, &[], (820, 440), opts);
    plan.layers
        .extend(crate::layout::spread_layers(&plan.frame, spreads));
    write_figure(&plan, figure.stem)
}

/// Draws a report figure with spread bands (see [`Band`]) as SVG and PNG.
/// The bands take the colours after the figure's series, so a figure can
/// mix single runs (series) and multi-seed results (bands).
pub fn figure_with_bands(figure: &Figure<'_>, bands: &[Band]) -> Result<(), String> {
    register();
    write_figure(&plan(figure, bands, (820, 440)), figure.stem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{sample, Series};
    use crate::layer::COLOURS;

    #[test]
    fn png_strokes_do_not_cross_the_axes() {
        // A spiky line touching zero: 2 px strokes with miter joins ran
        // below the x axis in the PNG.
        let points: Vec<(f64, f64)> = (0..200)
            .map(|i| (i as f64 * 0.1, if i % 2 == 0 { 0.0 } else { 10.0 }))
            .collect();
        let series = [Series {
            label: String::new(),
            points,
        }];
        let fig = Figure {
            title: "spikes",
            ..sample(&series, &[])
        };
        register();
        let p = plan(&fig, &[], (820, 440));
        let buf = render_png(&p).unwrap();
        let w = p.size.0 as usize;
        let c = COLOURS[0];
        let blueish = |x: usize, y: usize| {
            let i = (y * w + x) * 3;
            let (r, g, b) = (buf[i], buf[i + 1], buf[i + 2]);
            b > 120 && r < 150 && b > r + 40 && g < 200 && (r, g, b) != (c.0, c.1, c.1)
        };
        let f = p.frame;
        let mut inside = 0;
        for y in 0..p.size.1 as usize {
            for x in 0..w {
                let within = x as i32 >= f.left
                    && x as i32 <= f.right
                    && y as i32 >= f.top
                    && y as i32 <= f.bottom;
                if blueish(x, y) {
                    assert!(within, "series pixel at ({x}, {y}) outside {f:?}");
                    inside += 1;
                }
            }
        }
        assert!(inside > 1000, "the series was drawn ({inside} pixels)");
    }
    /// The widest run of blank columns inside the ink of `text` drawn at
    /// 13 px into a bitmap.
    fn widest_gap(text: &str, mode: TextMode) -> usize {
        register();
        let (w, h) = (200u32, 30u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let area = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            draw_text(
                &area,
                mode,
                text,
                (10, 5),
                13.0,
                (HPos::Left, VPos::Top),
                false,
                "t",
            )
            .unwrap();
            area.present().unwrap();
        }
        let ink: Vec<bool> = (0..w as usize)
            .map(|x| (0..h as usize).any(|y| buf[(y * w as usize + x) * 3] < 160))
            .collect();
        let first = ink.iter().position(|&i| i).unwrap();
        let last = ink.iter().rposition(|&i| i).unwrap();
        let mut best = 0;
        let mut run = 0;
        for &i in &ink[first..=last] {
            run = if i { 0 } else { run + 1 };
            best = best.max(run);
        }
        best
    }

    #[test]
    fn png_text_keeps_its_spaces() {
        // "T b": the space is 3.5 px plus b's 1 px bearing; plotters'
        // bitmap text left 2 px ("RTTbehind").
        assert!(widest_gap("T b", TextMode::Glyphs) >= 3);
        assert!(widest_gap("RTT behind", TextMode::Glyphs) >= 3);
    }
    #[test]
    fn svg_draws_the_data_in_a_clipped_group() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("f");
        let series = [Series {
            label: "bbr".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        }];
        figure(&Figure {
            stem: &stem,
            log_y: true,
            ..sample(&series, &[(0.5, 1.5)])
        })
        .unwrap();
        let svg = fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert_eq!(svg.matches("<svg").count(), 1);
        assert_eq!(svg.matches("</svg>").count(), 1);
        let group = svg.find("<g clip-path=\"url(#plot-area)\">").unwrap();
        let end = svg[group..].find("</g>").unwrap() + group;
        let polyline = svg.find("stroke=\"#1F77B4\"").unwrap();
        assert!(polyline > group && polyline < end);
        assert!(stem.with_extension("png").exists());
    }
}
