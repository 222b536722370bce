#!/usr/bin/python3
"""Reads an ODF file the way LibreOffice wrote it, for deskpilot's real-app end-to-end tests.

The saved file is the oracle: deskpilot never touches it. Prints one JSON object.

  odf_read.py cells FILE   every non-empty spreadsheet cell: sheet, row, col (1-based),
                           formula, value, text
  odf_read.py spans FILE   every text run of a text document with its effective weight:
                           {"text", "bold"} in document order
"""
import json
import sys
import zipfile
import xml.etree.ElementTree as ET

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
}


def q(prefix, name):
    return "{%s}%s" % (NS[prefix], name)


def content(path):
    with zipfile.ZipFile(path) as z:
        return ET.fromstring(z.read("content.xml"))


def cells(root):
    out = []
    for sheet in root.iter(q("table", "table")):
        row_no = 0
        for row in sheet.iter(q("table", "table-row")):
            rows = int(row.get(q("table", "number-rows-repeated"), "1"))
            col_no = 0
            for cell in row:
                if cell.tag not in (q("table", "table-cell"), q("table", "covered-table-cell")):
                    continue
                cols = int(cell.get(q("table", "number-columns-repeated"), "1"))
                formula = cell.get(q("table", "formula"))
                value = cell.get(q("office", "value"))
                text = "\n".join("".join(p.itertext()) for p in cell.iter(q("text", "p")))
                if formula or value or text:
                    out.append({
                        "sheet": sheet.get(q("table", "name")),
                        "row": row_no + 1,
                        "col": col_no + 1,
                        "formula": formula,
                        "value": value,
                        "text": text,
                    })
                col_no += cols
            row_no += rows
    return out


def bold_styles(root):
    bold = set()
    for st in root.iter(q("style", "style")):
        props = st.find(q("style", "text-properties"))
        if props is not None and props.get(q("fo", "font-weight")) == "bold":
            bold.add(st.get(q("style", "name")))
    return bold


def spans(root):
    bold = bold_styles(root)
    out = []

    def visit(node, is_bold):
        style = node.get(q("text", "style-name"))
        here = is_bold or (style in bold)
        if node.text:
            out.append({"text": node.text, "bold": here})
        for child in node:
            visit(child, here)
            if child.tail:
                out.append({"text": child.tail, "bold": here})

    body = root.find(q("office", "body"))
    for p in body.iter():
        if p.tag in (q("text", "p"), q("text", "h")):
            visit(p, False)
    return out


def main(argv):
    cmd, path = argv[1], argv[2]
    root = content(path)
    if cmd == "cells":
        return {"cells": cells(root)}
    if cmd == "spans":
        return {"spans": spans(root)}
    return {"error": f"unknown command {cmd}"}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv), ensure_ascii=False))
