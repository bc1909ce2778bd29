"""HTML becomes readable text: structure kept, furniture and markup dropped, output capped."""

from __future__ import annotations

from clawseed_edge.tools.html_text import html_to_text


def test_structure_is_kept_and_markup_dropped() -> None:
    html = (
        "<h1>Title</h1><p>One &amp; two<br>three</p><ol><li>first</li><li>second</li></ol>"
        "<pre>a  b\n  c</pre><a href='https://x.test/a'>link</a> <a href='#top'>top</a>"
    )
    text, cut = html_to_text(html, base_url="https://x.test/")
    assert not cut
    assert text == (
        "# Title\nOne & two\nthree\n- first\n- second\na  b\n  c\n"
        "link (https://x.test/a) top (https://x.test/#top)"
    )
    assert "<" not in text


def test_scripts_and_page_furniture_are_dropped_even_when_nested_or_broken() -> None:
    html = (
        "<nav><ul><li>menu</li></ul></nav><script>if (a < b) { x() }</script>"
        "<aside><div>ad</div></aside><p>kept</p><style>p{}</style><footer>foot"
    )
    text, _ = html_to_text(html)
    assert text == "kept"


def test_output_is_cut_at_max_chars() -> None:
    html = "".join(f"<p>paragraph {i} " + "w" * 50 + "</p>" for i in range(1000))
    text, cut = html_to_text(html, max_chars=500)
    assert cut and len(text) == 500


def test_a_javascript_link_is_not_shown_as_a_url() -> None:
    text, _ = html_to_text("<p><a href='javascript:alert(1)'>click</a></p>")
    assert text == "click"
