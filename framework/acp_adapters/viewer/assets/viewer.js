// The viewer's page: draws what the JSON API sends, as text only.
//
// Every string that comes from a thread (an agent's words, titles, paths, commands, their
// output, patches) is put in the page with textContent or a text node, never as markup, and
// the server's Content-Security-Policy allows no script but this file: no text of an agent
// can run in the page.
"use strict";

(function () {
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function getJSON(path) {
    return fetch(path, { headers: { accept: "application/json" } }).then(function (answer) {
      return answer.json().then(function (body) {
        if (!answer.ok) throw new Error(body && body.error ? body.error : answer.statusText);
        return body;
      });
    });
  }

  function setStatus(text, kind) {
    const status = document.getElementById("status");
    status.textContent = text;
    status.className = "status" + (kind ? " " + kind : "");
  }

  function when(seconds) {
    if (!seconds) return "";
    return new Date(seconds * 1000).toLocaleString();
  }

  // --- the list of threads ---------------------------------------------------------------

  function drawList() {
    getJSON("/api/threads").then(function (body) {
      const table = document.getElementById("threads");
      const rows = table.querySelector("tbody");
      rows.replaceChildren();
      body.threads.forEach(function (thread) {
        const row = el("tr");
        const name = el("td");
        const link = el("a", "", thread.name || thread.id);
        link.href = "/threads/" + encodeURIComponent(thread.id);
        name.appendChild(link);
        row.appendChild(name);
        row.appendChild(el("td", "", thread.provider));
        row.appendChild(el("td", "", thread.title || ""));
        row.appendChild(el("td", "", thread.turns));
        row.appendChild(el("td", "", when(thread.updated_at)));
        row.appendChild(el("td", "status-" + thread.status, thread.status));
        rows.appendChild(row);
      });
      table.hidden = false;
      setStatus(body.threads.length ? body.threads.length + " threads" : "No thread yet.");
    }).catch(function (error) {
      setStatus(String(error.message || error), "error");
    });
  }

  // --- a thread ------------------------------------------------------------------------

  const threadId = decodeURIComponent(location.pathname.replace(/^\/threads\//, ""));
  const base = "/api/threads/" + encodeURIComponent(threadId);
  let items = [];
  const closed = new Set(); // file changes the reader folded
  const opened = new Set(); // reasoning and outputs the reader unfolded
  const full = new Map(); // item id -> the item in full (its patch, its output), once fetched

  function fullItem(id) {
    if (!full.has(id)) {
      full.set(id, getJSON(base + "/items/" + encodeURIComponent(id)).then(function (body) {
        return body.item;
      }));
    }
    return full.get(id);
  }

  function applyDelta(delta) {
    if ("add" in delta) {
      const at = delta.at === undefined ? items.length : delta.at;
      items.splice(at, 0, delta.add);
      return delta.add.id;
    }
    if ("remove" in delta) {
      items = items.filter(function (item) { return item.id !== delta.remove; });
      return null;
    }
    const item = items.find(function (candidate) { return candidate.id === delta.id; });
    if (!item) return null;
    Object.assign(item, delta.set || {});
    Object.entries(delta.append || {}).forEach(function (pair) {
      item[pair[0]] = (item[pair[0]] || "") + pair[1];
    });
    (delta.unset || []).forEach(function (key) { delete item[key]; });
    return item.id;
  }

  function foldable(id, summary, isOpen, fill) {
    // A <details> whose body is drawn (fill) when it opens, and stays open across redraws.
    const details = el("details");
    details.appendChild(el("summary", "", summary));
    const body = el("div");
    details.appendChild(body);
    let filled = false;
    function open() {
      if (filled) return;
      filled = true;
      fill(body);
    }
    details.addEventListener("toggle", function () {
      if (details.open) {
        open();
        opened.add(id + summary);
        closed.delete(id + summary);
      } else {
        opened.delete(id + summary);
        closed.add(id + summary);
      }
    });
    if (isOpen) {
      details.open = true;
      open();
    }
    return details;
  }

  function drawPatch(target, text) {
    const diff = el("div", "diff");
    text.split("\n").forEach(function (line, index, lines) {
      if (index === lines.length - 1 && line === "") return;
      let kind = "context";
      if (line.startsWith("--- ") || line.startsWith("+++ ")) kind = "file";
      else if (line.startsWith("@@")) kind = "hunk";
      else if (line.startsWith("+")) kind = "line-add";
      else if (line.startsWith("-")) kind = "line-del";
      else if (line.startsWith("\\")) kind = "note";
      diff.appendChild(el("div", kind, line));
    });
    target.appendChild(diff);
  }

  function head(item, label) {
    const line = el("div", "head");
    line.appendChild(el("span", "kind", label));
    if (item.title) line.appendChild(el("span", "title", item.title));
    if (item.status && item.status !== "completed") {
      line.appendChild(el("span", "state", item.status));
    }
    return line;
  }

  function fileChange(node, item) {
    const line = head(item, "file change");
    const stats = el("span", "stats");
    stats.appendChild(el("span", "add", "+" + (item.additions || 0)));
    stats.appendChild(el("span", "del", "-" + (item.deletions || 0)));
    line.appendChild(stats);
    node.appendChild(line);
    const files = el("ul", "paths");
    (item.paths || []).forEach(function (path) {
      const operation = (item.operations || {})[path];
      const moved = (item.moved_from || {})[path];
      let text = (operation ? operation + " " : "") + path;
      if (moved) text += " (from " + moved + ")";
      files.appendChild(el("li", "", text));
    });
    node.appendChild(files);
    ["error", "error_text", "message", "patch_note"].forEach(function (field) {
      if (item[field]) node.appendChild(el("p", "text note", item[field]));
    });
    if (item.diff_omitted_reason) {
      node.appendChild(el("p", "note", "patch omitted: " + item.diff_omitted_reason));
      return;
    }
    node.appendChild(foldable(item.id, "patch", !closed.has(item.id + "patch"), function (body) {
      body.appendChild(el("p", "note", "loading…"));
      fullItem(item.id).then(function (whole) {
        body.replaceChildren();
        if (whole.diff_str) drawPatch(body, whole.diff_str);
        else body.appendChild(el("p", "note", "no patch"));
      }).catch(function (error) {
        body.replaceChildren(el("p", "note", String(error.message || error)));
      });
    }));
  }

  function command(node, item) {
    node.appendChild(head(item, "command"));
    if (item.command) node.appendChild(el("pre", "text", "$ " + item.command));
    if (item.cwd) node.appendChild(el("div", "meta", "in " + item.cwd));
    if (item.exit_code !== undefined) node.appendChild(el("div", "meta", "exit " + item.exit_code));
    if (item.refused) node.appendChild(el("p", "text note", "refused: " + item.refused));
    if (!item.output_omitted) return;
    node.appendChild(foldable(item.id, "output", opened.has(item.id + "output"), function (body) {
      body.appendChild(el("p", "note", "loading…"));
      fullItem(item.id).then(function (whole) {
        body.replaceChildren(el("pre", "output", whole.output || ""));
      }).catch(function (error) {
        body.replaceChildren(el("p", "note", String(error.message || error)));
      });
    }));
  }

  function approval(node, item) {
    node.appendChild(head(item, "approval"));
    const options = el("ul", "options");
    (item.options || []).forEach(function (option) {
      const chosen = option.optionId !== undefined && option.optionId === item.option_id;
      options.appendChild(el("li", chosen ? "outcome" : "", option.name || option.optionId || ""));
    });
    node.appendChild(options);
    let outcome = item.outcome ? item.outcome : "waiting for an answer";
    if (item.option_kind) outcome += " (" + item.option_kind + ")";
    node.appendChild(el("p", "outcome", outcome));
  }

  function drawItem(item) {
    const node = el("li", "item " + item.kind + " " + (item.status || ""));
    node.dataset.id = item.id;
    switch (item.kind) {
      case "user_message":
        node.appendChild(head(item, "you"));
        node.appendChild(el("p", "text", item.text || ""));
        break;
      case "assistant_message":
        node.appendChild(head(item, "agent"));
        node.appendChild(el("p", "text", item.text || ""));
        break;
      case "reasoning":
        node.appendChild(foldable(item.id, "reasoning", opened.has(item.id + "reasoning"),
          function (body) { body.appendChild(el("p", "text", item.text || "")); }));
        break;
      case "plan": {
        node.appendChild(head(item, "plan"));
        const steps = el("ol", "plan");
        (item.entries || []).forEach(function (step) {
          steps.appendChild(el("li", step.status, step.content + " (" + step.status + ")"));
        });
        node.appendChild(steps);
        break;
      }
      case "command_execution":
        command(node, item);
        break;
      case "file_change":
        fileChange(node, item);
        break;
      case "approval_request":
        approval(node, item);
        break;
      case "error":
        node.appendChild(head(item, "error"));
        node.appendChild(el("p", "text", item.message || ""));
        break;
      case "notice":
        node.appendChild(head(item, "notice"));
        if (item.text) node.appendChild(el("p", "text", item.text));
        break;
      default: {
        node.appendChild(head(item, (item.kind || "item").replace("_", " ")));
        const what = item.url || item.query || (item.paths || []).join(", ");
        if (what) node.appendChild(el("p", "text", what));
      }
    }
    return node;
  }

  function turnPatch(turn) {
    // A turn's whole patch, after its last item: fetched when its fold is opened.
    const node = el("li", "item turn-patch");
    node.dataset.id = "turn-" + turn;
    node.appendChild(foldable("turn-" + turn, "turn " + turn + ": the whole patch",
      opened.has("turn-" + turn + "turn " + turn + ": the whole patch"), function (body) {
        body.appendChild(el("p", "note", "loading…"));
        getJSON(base + "/turns/" + turn + "/patch").then(function (whole) {
          body.replaceChildren();
          if (whole.patch) drawPatch(body, whole.patch);
          else body.appendChild(el("p", "note", "no file changed"));
        }).catch(function (error) {
          body.replaceChildren(el("p", "note", String(error.message || error)));
        });
      }));
    return node;
  }

  function drawAll() {
    const list = document.getElementById("items");
    const nodes = [];
    items.forEach(function (item, index) {
      nodes.push(drawItem(item));
      const next = items[index + 1];
      const edits = items.some(function (other) {
        return other.turn === item.turn && other.kind === "file_change";
      });
      if (item.turn && edits && (!next || next.turn !== item.turn)) nodes.push(turnPatch(item.turn));
    });
    list.replaceChildren.apply(list, nodes);
    // When the first item was drawn: the page's budget is measured by it (docs/viewer.md).
    if (items.length && !performance.getEntriesByName("acp-first-item").length) {
      performance.mark("acp-first-item");
    }
  }

  function redraw(id) {
    const list = document.getElementById("items");
    const index = items.findIndex(function (item) { return item.id === id; });
    const old = Array.prototype.find.call(list.children, function (node) {
      return node.dataset.id === id;
    });
    if (index < 0 || !old) {
      drawAll();
      return;
    }
    list.replaceChild(drawItem(items[index]), old);
  }

  function follow() {
    const events = new EventSource(base + "/events");
    events.addEventListener("snapshot", function (event) {
      const snapshot = JSON.parse(event.data);
      items = snapshot.items;
      full.clear();
      drawAll();
      if (snapshot.error) setStatus(snapshot.error, "error");
      else setStatus("live", "live");
    });
    events.addEventListener("delta", function (event) {
      const delta = JSON.parse(event.data);
      const id = applyDelta(delta);
      if (id === null) drawAll();
      else {
        full.delete(id);
        redraw(id);
      }
    });
    events.addEventListener("error", function () {
      setStatus("reconnecting…");
    });
  }

  function offerPrompts() {
    // Only when the server was started with --allow-prompts; the token is the one it printed.
    getJSON("/api/settings").then(function (settings) {
      if (!settings.prompts) return;
      const form = document.getElementById("prompt");
      const token = document.getElementById("prompt-token");
      const said = document.getElementById("prompt-status");
      token.value = sessionStorage.getItem("acp-adapters-token") || "";
      form.hidden = false;
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        const text = document.getElementById("prompt-text");
        sessionStorage.setItem("acp-adapters-token", token.value);
        fetch(base + "/prompts", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer " + token.value },
          body: JSON.stringify({ text: text.value }),
        }).then(function (answer) {
          return answer.json().then(function (body) {
            if (!answer.ok) throw new Error(body.error || answer.statusText);
            said.textContent = "queued (position " + body.position + ")";
            text.value = "";
          });
        }).catch(function (error) {
          said.textContent = String(error.message || error);
        });
      });
    }).catch(function () {});
  }

  function drawThread() {
    getJSON(base).then(function (thread) {
      const title = thread.title || thread.name || thread.id;
      document.getElementById("title").textContent = title;
      document.title = "acp-adapters: " + title;
      document.getElementById("meta").textContent = [
        thread.name, thread.provider, thread.turns + " turns", thread.status, when(thread.updated_at),
      ].filter(Boolean).join(" · ");
      return getJSON(base + "/snapshot");
    }).then(function (snapshot) {
      items = snapshot.items;
      drawAll();
      setStatus("");
      follow();
      offerPrompts();
    }).catch(function (error) {
      setStatus(String(error.message || error), "error");
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (document.body.dataset.page === "list") drawList();
    else drawThread();
  });
})();
