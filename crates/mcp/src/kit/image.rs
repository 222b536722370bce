//! The screenshot answer every profile gives, declared once: the profile's own first lines
//! (size, mapping, what to pass back), then what every image says the same way (the regions
//! privacy masking blacked out and the capture's notes), the image block and the profile's
//! structured fields.

use base64::Engine as _;
use deskpilot_engine::Screenshot;
use deskpilot_engine::pipeline::ImageFormat;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// The format as results name it: `png` or `jpeg`.
pub(crate) fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Jpeg { .. } => "jpeg",
        ImageFormat::Png => "png",
    }
}

/// The screenshot's bytes as an image content block.
pub(crate) fn block(shot: &Screenshot) -> ContentBlock {
    let data = base64::engine::general_purpose::STANDARD.encode(&shot.image.bytes);
    ContentBlock::image(data, shot.image.format.mime_type())
}

/// `head` followed by the masked regions and the capture's notes.
pub(crate) fn text(mut head: String, shot: &Screenshot) -> String {
    super::render::masks_and_notes(&mut head, shot.masked_regions, &shot.notes, |n| {
        format!("{n} privacy-masked regions are blacked out.")
    });
    head
}

/// The whole answer: [`text`] of `head`, the image block and `structured`.
pub(crate) fn answer(head: String, shot: &Screenshot, structured: Value) -> CallToolResult {
    let mut result =
        CallToolResult::success(vec![ContentBlock::text(text(head, shot)), block(shot)]);
    result.structured_content = Some(structured);
    result
}
