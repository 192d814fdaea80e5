"""The built dashboard is served by the backend, with client-side routes falling back to index."""

from fastapi.testclient import TestClient

from hitcurve.core.config import get_settings
from hitcurve.main import create_app


def test_built_frontend_is_served_at_root() -> None:
    dist = get_settings().frontend_dist
    assert (dist / "index.html").is_file(), f"{dist} has no build: run `make build` (make test does)"
    client = TestClient(create_app())
    index = client.get("/")
    assert index.status_code == 200
    assert '<div id="root">' in index.text
    asset = next((dist / "assets").glob("*.js"))
    js = client.get(f"/assets/{asset.name}")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert client.get("/clusters/some-client-route").text == index.text


def test_unknown_api_path_is_a_json_404_not_the_dashboard() -> None:
    response = TestClient(create_app()).get("/api/v1/no-such-route")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
