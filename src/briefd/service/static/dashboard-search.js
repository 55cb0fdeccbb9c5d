// the dashboard: the search box (inlined into dashboard.html by routes/pages.py, in this order)
const SEARCH_FAILED = "search failed: ";

// why a search returned nothing, as the MCP text says it (service/render.py)
function nothing(r) {
  if (r.note) return `Nothing returned: ${r.note}.`;
  if (r.gate === "empty") {
    return "Nothing returned: the relevance gate judged the query unrelated to this knowledge base " +
      `(${(r.gate_reasons || []).join("; ")}); ask in the words its documents use.`;
  }
  if (!r.scopes.length) return "Nothing returned: no document is indexed yet, so there is nothing to search.";
  return `No section matches in scopes ${r.scopes.join(", ")}.`;
}

// a hit shows its first lines: one cut there says so and opens whole (the rest of a section
// was hidden mid-line, with no way to read it here)
function whole(div, pre, content) {
  if (pre.scrollHeight <= pre.clientHeight + 1) return;
  const lines = content.split("\n").length;
  const button = document.createElement("button");
  button.type = "button"; button.className = "more";
  button.textContent = `show all ${lines} lines`;
  button.setAttribute("aria-expanded", "false");
  button.addEventListener("click", () => {
    const open = pre.classList.toggle("whole");
    button.textContent = open ? "show less" : `show all ${lines} lines`;
    button.setAttribute("aria-expanded", String(open));
  });
  div.append(button);
}

// each search's number: only the last one asked shows what it found (an earlier, slower one —
// a long query the model takes longer on — answered after it, and its hits stood under the
// new query)
let searches = 0;

// hits asked for at a time: the server's search.top_k (8) was all a person could ever read
// here, with nothing saying that more ranked below, however large the knowledge
const HITS_PAGE = 10, HITS_MOST = 100;  // /api/search takes top_k up to 100

async function search(event) {
  event.preventDefault();
  const q = $("search-input").value.trim();
  if (q) await find(q, HITS_PAGE);
}

async function find(q, count) {
  const out = $("search-results");
  const mine = ++searches;
  try {
    // a person reads every ranked hit here: the budget an agent would get does not apply
    const r = await api(`/api/search?client=dashboard&scopes=all&max_tokens=200000&top_k=${count}&q=` + encodeURIComponent(q));
    if (mine !== searches) return;
    out.replaceChildren();
    // only the last search's failure is over: what else is said (the health panels) stands
    if ($("message").textContent.startsWith(SEARCH_FAILED)) message("", false);
    if (!r.hits.length) {
      const p = document.createElement("p"); p.className = "muted";
      p.textContent = nothing(r);
      out.append(p);
    }
    // what the answer warns of leads its hits: searched by keywords only (the model failed, or
    // the index has no vectors of it) read as briefd ranking badly, unsaid
    for (const text of r.warnings || []) {
      const p = document.createElement("p"); p.className = "bad warning";
      p.textContent = "warning: " + text;
      out.append(p);
    }
    // a linked section is no match of its own (its score is 0): it says which hit links to it,
    // as the MCP text and the CLI do, rather than "score 0.000 · linked", read as noise
    const rank = new Map(r.hits.map((h, i) => [h.chunk_id, i + 1]));
    const how = (h) => !h.related_to ? `score ${h.score.toFixed(3)}`
      : rank.has(h.related_to) ? `linked from ${rank.get(h.related_to)}.` : `linked from chunk ${h.related_to}`;
    r.hits.forEach((h, i) => {
      const div = document.createElement("div"); div.className = "hit";
      const title = document.createElement("strong");
      title.textContent = `${i + 1}. ${h.heading_path.join(" › ") || h.title}`;
      const where = document.createElement("div"); where.className = "where";
      where.textContent = `${printable(h.doc_path)}:${h.start_line}-${h.end_line} · ${h.scope} · ${how(h)} · ${h.tokens} tokens · chunk ${h.chunk_id}`;
      // a replaced document's text read as the policy in force: say what replaces it, as the
      // CLI, the MCP text and the bundles do
      if (h.superseded_by && h.superseded_by.length) {
        const newer = document.createElement("span"); newer.className = "bad superseded";
        newer.textContent = ` · superseded by ${printable(h.superseded_by.join(", "))} (prefer it)`;
        where.append(newer);
      }
      const pre = document.createElement("pre"); pre.textContent = h.content;
      div.append(title, where, pre);
      out.append(div);
      whole(div, pre, h.content);
    });
    // as many ranked hits as asked for (linked ones come after them): more may rank below
    const full = r.hits.filter((h) => !h.related_to).length >= count;
    if (full && count >= HITS_MOST) {
      const p = document.createElement("p"); p.className = "muted";
      p.textContent = `The first ${HITS_MOST} ranked hits are shown: more words in the query narrow it.`;
      out.append(p);
    }
    if (full && count < HITS_MOST) {
      const next = Math.min(HITS_MOST, count + HITS_PAGE);
      const more = document.createElement("button");
      more.type = "button"; more.id = "more-hits";
      more.textContent = `show ${next - count} more hits`;
      more.addEventListener("click", async () => {
        await find(q, next);
        // the keyboard goes on at the first hit it had not read (the list is drawn anew)
        const first = out.querySelectorAll(".hit strong")[count];
        if (first) { first.tabIndex = -1; first.focus(); }
      });
      out.append(more);
    }
    refresh().catch(() => {});
  } catch (e) {
    if (mine !== searches) return;
    out.replaceChildren();  // the last query's hits would read as this one's
    // a search is a GET: its URL holds 8 KiB, and the server's advice (a POST body) is not
    // something this page can take
    const built = await building(e);
    if (mine !== searches) return;
    const why = e.message.startsWith("414:")
      ? `the query is too long to search (${q.length.toLocaleString("en-US")} characters; a URL holds 8 KiB): search with its key words`
      : built ? built + SEARCH_AGAIN
      : e.message;
    message(SEARCH_FAILED + why, true);
  }
}
