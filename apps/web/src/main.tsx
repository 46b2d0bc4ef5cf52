import { render } from "preact"
import { App } from "./app.js"
import "./styles.css"

const root = document.getElementById("app")!
// the "Loading…" line of the HTML goes: Preact renders beside what is there
root.textContent = ""
render(<App />, root)
