import { configure } from "@testing-library/react";

// findBy*/waitFor return as soon as what they wait for is there; their time-out only catches a
// page that never shows it. Beside `make test`'s other lanes on 2 cores (load 60-90) one render
// and its mocked fetches took over 20 s, so the waits get most of a test's time-out.
configure({ asyncUtilTimeout: 45_000 });
