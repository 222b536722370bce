//! Probe: read a PNG with several tunings and print timing and text.
use deskpilot_backend::GrayImage;
use deskpilot_ocr::reader::{Reader, Tuning};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = std::fs::File::open(&args[1]).unwrap();
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let data: Vec<u8> = buf[..info.buffer_size()]
        .chunks(ch)
        .map(|p| {
            if ch >= 3 {
                ((p[0] as u32 * 77 + p[1] as u32 * 150 + p[2] as u32 * 29) >> 8) as u8
            } else {
                p[0]
            }
        })
        .collect();
    let image = GrayImage {
        width: info.width,
        height: info.height,
        data,
    };
    if let Ok(out) = std::env::var("DUMP") {
        let mut n = image.clone();
        deskpilot_ocr::prepare::normalize_polarity(&mut n);
        let f = std::fs::File::create(out).unwrap();
        let mut e = png::Encoder::new(std::io::BufWriter::new(f), n.width, n.height);
        e.set_color(png::ColorType::Grayscale);
        e.write_header().unwrap().write_image_data(&n.data).unwrap();
    }
    {
        let mut n = image.clone();
        deskpilot_ocr::prepare::normalize_polarity(&mut n);
        if std::env::var("ROWS").is_ok() {
            for y in 380..450 {
                eprint!(
                    "{}{}",
                    y,
                    if deskpilot_ocr::prepare::quiet(&n, y) {
                        "q "
                    } else {
                        "- "
                    }
                );
            }
            eprintln!();
        }
        for b in deskpilot_ocr::prepare::bands(&n, 40) {
            eprintln!(
                "band {:?} scale {} ink {}",
                b,
                deskpilot_ocr::prepare::scale_for(&n, b),
                deskpilot_ocr::prepare::has_ink(&n, b)
            );
        }
    }
    let scale: u32 = args[2].parse().unwrap();
    let psm: i32 = args[3].parse().unwrap();
    let threads: usize = args[4].parse().unwrap();
    let langs: Vec<String> = args[5].split('+').map(String::from).collect();
    let reader = Reader::new(Tuning {
        scale,
        psm,
        threads,
    });
    let t = std::time::Instant::now();
    reader.warm(&langs).unwrap();
    let warm = t.elapsed();
    for round in 0..2 {
        let read = reader.read(&image, &langs).unwrap();
        eprintln!(
            "round {round}: {:?} warm {:?} lines {} reused {:?}",
            read.elapsed,
            warm,
            read.lines.len(),
            read.reused
        );
        if round == 0 && args.get(6).is_some() {
            for l in &read.lines {
                eprintln!("{:5.1} {:?} {}", l.confidence, l.bounds, l.text);
            }
        }
    }
}
