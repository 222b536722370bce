//! Telling a blank `PrintWindow` result from a real one. Cross-process `PrintWindow` can
//! return success and draw nothing (Wine always; Windows for some GPU-rendered apps), which
//! leaves the bitmap one flat colour.

/// Whether every pixel of a 32-bit BGRX buffer has the same colour (the padding byte is
/// ignored). An empty buffer is blank.
pub fn is_blank(bgrx: &[u8]) -> bool {
    let mut pixels = bgrx.chunks_exact(4);
    let Some(first) = pixels.next() else {
        return true;
    };
    pixels.all(|p| p[..3] == first[..3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_buffers_are_blank_and_one_different_pixel_is_not() {
        let mut data = vec![0u8; 64 * 4];
        assert!(is_blank(&data));
        for p in data.chunks_exact_mut(4) {
            p[3] = 0xff; // padding differs: still blank
        }
        data[0] = 0;
        assert!(is_blank(&data));
        data[63 * 4 + 1] = 7;
        assert!(!is_blank(&data));
        assert!(is_blank(&[]));
    }
}
