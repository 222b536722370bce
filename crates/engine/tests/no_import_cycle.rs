//! No import circle among the engine's modules: the graph its imports draw
//! (`import_graph`) has no cycle.

mod import_graph;

use std::path::Path;

#[test]
fn the_engine_modules_import_each_other_without_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = import_graph::graph(&src, 20);
    assert!(
        edges["find"].contains("matcher") && edges["ocr"].contains("matcher"),
        "the graph was read: {edges:?}"
    );
    let circles = import_graph::circles(&edges);
    assert!(
        circles.is_empty(),
        "import circles in crates/engine/src:\n{}",
        circles.join("\n")
    );
}
