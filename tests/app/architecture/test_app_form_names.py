"""Every field name of the Architecture form whole where the screen has room, read from the rendered screen (issue
36 item 20: "linformer_shari…", "performer_featu…" at 160x48 with half the screen empty)."""

from __future__ import annotations

from app_support import app_for, screen_text, view_mounted, wait_for, wait_ready

from tui_lab.app.views.architecture.config_form import FORM_FIELDS


async def test_every_field_name_is_whole_at_160x48():
    app = app_for()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        view = await view_mounted(pilot, "architecture")
        app.show_view("architecture")
        await wait_for(pilot, lambda: not view.fields_pending, 60)
        seen = set()
        for name in FORM_FIELDS:
            app.query_one(f"#f-{name}").scroll_visible(animate=False, immediate=True)
            await pilot.pause()
            text = screen_text(app)
            seen |= {n for n in FORM_FIELDS if f"\n{n} " in text}
            assert "…" not in "\n".join(line[:40] for line in text.splitlines()), text
        assert seen == set(FORM_FIELDS), set(FORM_FIELDS) - seen
