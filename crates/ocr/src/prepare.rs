//! Getting a capture ready for Tesseract: split it into bands of text rows, and enlarge small
//! text.
//!
//! A screen is cut across at rows that hold no text, so the bands can be read in parallel
//! and a band whose pixels did not change since the last read is not read again. A row holds
//! no text when it barely differs from the row above (a flat background, the vertical edge of
//! a panel) and crosses few edges; a cut is made only in the middle of a run of such rows, so
//! it never goes through a glyph.

use deskpilot_backend::GrayImage;

/// A horizontal strip of the image: rows `top..top + height`, the full width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    pub top: u32,
    pub height: u32,
}

/// A gray level step this large between neighbours counts as an edge.
const EDGE: u8 = 40;
/// Quiet rows needed in a row before a cut may go in their middle.
const MIN_GAP: u32 = 3;

/// Whether row `y` holds nothing worth reading: few pixels differ from the row above and few
/// horizontal edges are crossed.
pub fn quiet(image: &GrayImage, y: u32) -> bool {
    let w = image.width as usize;
    let row = &image.data[y as usize * w..][..w];
    let above = if y == 0 {
        row
    } else {
        &image.data[(y as usize - 1) * w..][..w]
    };
    let vertical = row
        .iter()
        .zip(above)
        .filter(|(a, b)| a.abs_diff(**b) >= EDGE)
        .count();
    let horizontal = row
        .windows(2)
        .filter(|p| p[0].abs_diff(p[1]) >= EDGE)
        .count();
    vertical <= (w / 600).max(1) && horizontal <= (w / 120).max(6)
}

/// Cuts `image` into bands at least `min_height` rows tall (except where the image is
/// shorter), each cut in the middle of a run of quiet rows. Bands cover every row, in order.
pub fn bands(image: &GrayImage, min_height: u32) -> Vec<Band> {
    let h = image.height;
    if h == 0 || image.width == 0 {
        return Vec::new();
    }
    let quiet: Vec<bool> = (0..h).map(|y| quiet(image, y)).collect();
    let mut cuts = Vec::new();
    let mut y = 0;
    while y < h {
        if !quiet[y as usize] {
            y += 1;
            continue;
        }
        let start = y;
        while y < h && quiet[y as usize] {
            y += 1;
        }
        if y - start >= MIN_GAP && start > 0 && y < h {
            cuts.push(start + (y - start) / 2);
        }
    }
    let mut out = Vec::new();
    let mut top = 0;
    for cut in cuts {
        if cut - top >= min_height && h - cut >= min_height / 2 {
            out.push(Band {
                top,
                height: cut - top,
            });
            top = cut;
        }
    }
    out.push(Band {
        top,
        height: h - top,
    });
    out
}

/// Whether a band holds anything at all (some row is not quiet).
pub fn has_ink(image: &GrayImage, band: Band) -> bool {
    (band.top..band.top + band.height).any(|y| !quiet(image, y))
}

/// How many times to enlarge a band: 2 when its text rows are short (most UI text at 96 dpi,
/// which Tesseract's models read poorly), 1 when they are tall already.
pub fn scale_for(image: &GrayImage, band: Band) -> u32 {
    let mut runs = Vec::new();
    let mut run = 0;
    for y in band.top..band.top + band.height {
        if quiet(image, y) {
            if run > 0 {
                runs.push(run);
            }
            run = 0;
        } else {
            run += 1;
        }
    }
    if run > 0 {
        runs.push(run);
    }
    runs.sort_unstable();
    match runs.get(runs.len() / 2) {
        Some(&median) if median >= 24 => 1,
        _ => 2,
    }
}

/// The pixels of `rect` (clipped to the image) as an image of their own, and where it landed.
pub fn sub_image(
    image: &GrayImage,
    rect: deskpilot_types::Rect,
) -> (GrayImage, deskpilot_types::Rect) {
    let x0 = rect.x.clamp(0, image.width as i32) as usize;
    let y0 = rect.y.clamp(0, image.height as i32) as usize;
    let x1 = (rect.x + rect.width as i32).clamp(0, image.width as i32) as usize;
    let y1 = (rect.y + rect.height as i32).clamp(0, image.height as i32) as usize;
    let (w, h) = (x1.saturating_sub(x0), y1.saturating_sub(y0));
    let mut data = Vec::with_capacity(w * h);
    for y in y0..y0 + h {
        data.extend_from_slice(&image.data[y * image.width as usize + x0..][..w]);
    }
    (
        GrayImage {
            width: w as u32,
            height: h as u32,
            data,
        },
        deskpilot_types::Rect::new(x0 as i32, y0 as i32, w as u32, h as u32),
    )
}

/// Rows `band` of `image`, enlarged `scale` times (1 or 2; bilinear at half-pixel centres).
pub fn crop_scaled(image: &GrayImage, band: Band, scale: u32) -> GrayImage {
    let w = image.width as usize;
    let rows = &image.data[band.top as usize * w..(band.top + band.height) as usize * w];
    if scale <= 1 {
        return GrayImage {
            width: image.width,
            height: band.height,
            data: rows.to_vec(),
        };
    }
    let (sw, sh) = (w * 2, band.height as usize * 2);
    let mut out = vec![0u8; sw * sh];
    let at = |x: isize, y: isize| -> u32 {
        let x = x.clamp(0, w as isize - 1) as usize;
        let y = y.clamp(0, band.height as isize - 1) as usize;
        rows[y * w + x] as u32
    };
    // Output pixel (2x + i, 2y + j) sits at source (x + (2i - 1) / 4, y + (2j - 1) / 4): a
    // 3:1 blend of the nearest source pixel and its neighbour on each axis.
    for y in 0..band.height as isize {
        for j in 0..2isize {
            let ny = if j == 0 { y - 1 } else { y + 1 };
            let line = &mut out[(y as usize * 2 + j as usize) * sw..][..sw];
            for x in 0..w as isize {
                let c = at(x, y) * 3 + at(x, ny);
                let l = at(x - 1, y) * 3 + at(x - 1, ny);
                let r = at(x + 1, y) * 3 + at(x + 1, ny);
                line[x as usize * 2] = ((c * 3 + l + 8) / 16) as u8;
                line[x as usize * 2 + 1] = ((c * 3 + r + 8) / 16) as u8;
            }
        }
    }
    GrayImage {
        width: sw as u32,
        height: sh as u32,
        data: out,
    }
}

/// Makes all text dark on light: a dark filled area (a button, a panel, a terminal) is
/// inverted together with what it encloses (its light text). Tesseract binarises a region with
/// one threshold and loses light-on-dark text beside dark-on-light text; after this it sees one
/// polarity.
///
/// A dark area counts as a background when it is a connected run of dark pixels bigger than
/// any glyph that fills at least half of its bounding box: glyphs (small) and
/// thin frames (sparse) do not. What it encloses is every pixel of its bounding box that cannot
/// be reached from the box's border without crossing it, so a light content area beside a
/// dark sidebar is left alone; of that, only glyph-sized pieces are inverted, so a window
/// surrounded by a dark desktop keeps its own polarity.
pub fn normalize_polarity(image: &mut GrayImage) {
    const DARK: u8 = 128;
    // Smaller dark areas are glyphs (a bold "a" fills half its box too).
    const MIN_WIDTH: usize = 20;
    const MIN_HEIGHT: usize = 12;
    const MIN_AREA: usize = 600;
    const MAX_GLYPH_HEIGHT: usize = 48;
    const MAX_GLYPH_AREA: usize = 1500;
    let (w, h) = (image.width as usize, image.height as usize);
    if w == 0 || h == 0 {
        return;
    }
    let mut label = vec![0u32; w * h];
    let mut stack = Vec::new();
    let mut next = 0u32;
    let mut backgrounds = Vec::new();
    for start in 0..w * h {
        if label[start] != 0 || image.data[start] >= DARK {
            continue;
        }
        next += 1;
        let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
        let mut count = 0usize;
        let mut sum = 0usize;
        label[start] = next;
        stack.push(start);
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            count += 1;
            sum += image.data[i] as usize;
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
            let mut visit = |j: usize| {
                if label[j] == 0 && image.data[j] < DARK {
                    label[j] = next;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < w {
                visit(i + 1);
            }
            if y > 0 {
                visit(i - w);
            }
            if y + 1 < h {
                visit(i + w);
            }
        }
        let (bw, bh) = (x1 + 1 - x0, y1 + 1 - y0);
        if bw >= MIN_WIDTH && bh >= MIN_HEIGHT && count >= MIN_AREA && count * 2 >= bw * bh {
            // Inverted, the area's own level becomes paper white: otherwise a mid-dark button
            // turns mid-light, and a global threshold takes it for ink.
            let paper = (255 - sum / count).max(1);
            backgrounds.push((next, x0, y0, bw, bh, paper));
        }
    }
    let mut outside = Vec::new();
    for (id, x0, y0, bw, bh, paper) in backgrounds {
        let invert = |p: u8| ((255 - p as usize) * 255 / paper).min(255) as u8;
        // Flood the box from its border through pixels that are not this area: what the
        // flood cannot reach is enclosed by it.
        outside.clear();
        outside.resize(bw * bh, false);
        let at = |bx: usize, by: usize| (y0 + by) * w + x0 + bx;
        for bx in 0..bw {
            for by in [0, bh - 1] {
                if label[at(bx, by)] != id && !outside[by * bw + bx] {
                    outside[by * bw + bx] = true;
                    stack.push(by * bw + bx);
                }
            }
        }
        for by in 0..bh {
            for bx in [0, bw - 1] {
                if label[at(bx, by)] != id && !outside[by * bw + bx] {
                    outside[by * bw + bx] = true;
                    stack.push(by * bw + bx);
                }
            }
        }
        while let Some(k) = stack.pop() {
            let (bx, by) = (k % bw, k / bw);
            let neighbours = [
                (bx > 0).then(|| k - 1),
                (bx + 1 < bw).then(|| k + 1),
                (by > 0).then(|| k - bw),
                (by + 1 < bh).then(|| k + bw),
            ];
            for n in neighbours.into_iter().flatten() {
                if !outside[n] && label[at(n % bw, n / bw)] != id {
                    outside[n] = true;
                    stack.push(n);
                }
            }
        }
        // The area itself turns light; of what it encloses, only glyph-sized pieces (its
        // light text) turn dark. A big enclosed piece (a window on a dark desktop, a light
        // text field in a dark panel) keeps its own polarity.
        let mut piece = Vec::new();
        for k in 0..bw * bh {
            if outside[k] {
                continue;
            }
            if label[at(k % bw, k / bw)] == id {
                let p = &mut image.data[at(k % bw, k / bw)];
                *p = invert(*p);
                outside[k] = true;
                continue;
            }
            // A piece of what is enclosed: collect it (marking it done), then judge its size.
            piece.clear();
            outside[k] = true;
            stack.push(k);
            let (mut py0, mut py1) = (k / bw, k / bw);
            while let Some(j) = stack.pop() {
                piece.push(j);
                py0 = py0.min(j / bw);
                py1 = py1.max(j / bw);
                let (bx, by) = (j % bw, j / bw);
                let neighbours = [
                    (bx > 0).then(|| j - 1),
                    (bx + 1 < bw).then(|| j + 1),
                    (by > 0).then(|| j - bw),
                    (by + 1 < bh).then(|| j + bw),
                ];
                for n in neighbours.into_iter().flatten() {
                    if !outside[n] && label[at(n % bw, n / bw)] != id {
                        outside[n] = true;
                        stack.push(n);
                    }
                }
            }
            if py1 + 1 - py0 <= MAX_GLYPH_HEIGHT && piece.len() <= MAX_GLYPH_AREA {
                for &j in &piece {
                    let p = &mut image.data[at(j % bw, j / bw)];
                    *p = invert(*p);
                }
            }
        }
    }
}

/// A 64-bit FNV-1a hash of a band's pixels: the key its words are remembered under.
pub fn fingerprint(image: &GrayImage, band: Band) -> u64 {
    let w = image.width as usize;
    let rows = &image.data[band.top as usize * w..(band.top + band.height) as usize * w];
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ ((image.width as u64) << 32 | band.height as u64);
    // Eight bytes at a time: the hash only has to tell changed pixels apart, fast.
    let mut chunks = rows.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ v).wrapping_mul(0x0000_0100_0000_01b3);
    }
    for b in chunks.remainder() {
        h = (h ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A white image with black "text" blocks in rows `rows`.
    fn page(width: u32, height: u32, rows: &[(u32, u32)]) -> GrayImage {
        let mut data = vec![255u8; (width * height) as usize];
        for &(top, bottom) in rows {
            for y in top..bottom {
                for x in (10..width - 10).step_by(3) {
                    // Stripes that change from row to row, like glyphs.
                    if (x / 3 + y) % 2 == 0 {
                        data[(y * width + x) as usize] = 0;
                    }
                }
            }
        }
        GrayImage {
            width,
            height,
            data,
        }
    }

    #[test]
    fn cuts_go_between_text_rows_and_cover_the_image() {
        let image = page(400, 200, &[(10, 25), (60, 75), (120, 140)]);
        let bands = bands(&image, 20);
        assert_eq!(bands.iter().map(|b| b.height).sum::<u32>(), 200);
        assert!(bands.len() >= 3, "{bands:?}");
        for b in &bands {
            for text in [(10, 25), (60, 75), (120, 140)] {
                let inside = b.top <= text.0 && text.1 <= b.top + b.height;
                let outside = text.1 <= b.top || b.top + b.height <= text.0;
                assert!(inside || outside, "band {b:?} cuts text rows {text:?}");
            }
        }
    }

    #[test]
    fn vertical_panel_edges_do_not_count_as_text() {
        // A dark sidebar and a separator line, no text: one quiet image.
        let mut image = page(400, 100, &[]);
        for y in 0..100 {
            for x in 0..80 {
                image.data[y * 400 + x] = 30;
            }
            image.data[y * 400 + 200] = 0;
        }
        assert!(!has_ink(
            &image,
            Band {
                top: 0,
                height: 100
            }
        ));
        let text = page(400, 100, &[(40, 52)]);
        assert!(has_ink(
            &text,
            Band {
                top: 0,
                height: 100
            }
        ));
    }

    #[test]
    fn doubling_keeps_flat_areas_flat_and_edges_in_place() {
        let mut image = GrayImage {
            width: 4,
            height: 2,
            data: vec![0, 0, 255, 255, 0, 0, 255, 255],
        };
        let big = crop_scaled(&image, Band { top: 0, height: 2 }, 2);
        assert_eq!((big.width, big.height), (8, 4));
        assert_eq!(&big.data[0..8], &[0, 0, 0, 64, 191, 255, 255, 255]);
        image.data.fill(77);
        let flat = crop_scaled(&image, Band { top: 0, height: 2 }, 2);
        assert!(flat.data.iter().all(|&v| v == 77));
    }

    #[test]
    fn light_text_on_dark_becomes_dark_on_light() {
        // Left half: dark text on white; right half: a dark panel with light text.
        let mut image = page(200, 40, &[(15, 25)]);
        for y in 5..35 {
            for x in 100..195 {
                let p = &mut image.data[y * 200 + x];
                *p = if *p == 0 { 250 } else { 20 };
            }
        }
        normalize_polarity(&mut image);
        let mean = |x0: usize, x1: usize| -> u32 {
            let mut sum = 0u32;
            for y in 0..40 {
                for x in x0..x1 {
                    sum += image.data[y * 200 + x] as u32;
                }
            }
            sum / (40 * (x1 - x0) as u32)
        };
        assert!(mean(10, 90) > 180, "left stays light: {}", mean(10, 90));
        assert!(
            mean(130, 190) > 180,
            "right becomes light: {}",
            mean(130, 190)
        );
        // A dark frame (sparse) around light content is not a background.
        let mut framed = page(100, 40, &[]);
        for x in 0..100 {
            framed.data[x] = 0;
            framed.data[39 * 100 + x] = 0;
        }
        let before = framed.clone();
        normalize_polarity(&mut framed);
        assert_eq!(framed, before);
    }

    #[test]
    fn fingerprints_tell_bands_apart() {
        let a = page(100, 40, &[(5, 15)]);
        let b = page(100, 40, &[(6, 16)]);
        let band = Band { top: 0, height: 40 };
        assert_eq!(fingerprint(&a, band), fingerprint(&a.clone(), band));
        assert_ne!(fingerprint(&a, band), fingerprint(&b, band));
    }
}
