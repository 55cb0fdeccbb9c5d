from __future__ import annotations

from briefd.markdown.mdx import without_mdx_code


def test_mdx_code_is_blanked_outside_fences_and_front_matter_keeping_lines() -> None:
    text = (
        "---\nimport: kept\n---\nimport A from 'a';\nexport {b};\n# Title\n\n"
        "~~~\nimport C from 'c';\n{/* in code */}\n~~~\n\nText {/* a\nb */} end. importance\n"
        "export default Layout\n"
    )
    out = without_mdx_code(text, 4)
    assert out.split("\n") == [
        "---",
        "import: kept",
        "---",
        " " * 18,
        " " * 11,
        "# Title",  # an ESM block left open ends at a heading
        "",
        "~~~",
        "import C from 'c';",
        "{/* in code */}",
        "~~~",
        "",
        "Text " + " " * 5,
        " " * 5 + " end. importance",
        " " * 21,
        "",
    ]
