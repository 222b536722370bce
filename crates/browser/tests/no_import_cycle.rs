//! No import circle among the browser crate's modules: the graph its imports draw, read by
//! the engine's `import_graph` (one reader for every crate that keeps this rule), has no cycle.

#[path = "../../engine/tests/import_graph/mod.rs"]
mod import_graph;

use std::path::Path;

#[test]
fn the_browser_modules_import_each_other_without_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = import_graph::graph(&src, 6);
    assert!(
        edges["page"].contains("cdp") && edges["page"].contains("snapshot"),
        "the graph was read: {edges:?}"
    );
    let circles = import_graph::circles(&edges);
    assert!(
        circles.is_empty(),
        "import circles in crates/browser/src:\n{}",
        circles.join("\n")
    );
}
