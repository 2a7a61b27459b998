// memoryadmin web UI: the little behaviour htmx does not give us. Loaded from a static file
// because the Content-Security-Policy allows no inline script.
(function () {
  "use strict";

  // Styles that only make sense with this script running (a folding navigation) key on it.
  document.documentElement.classList.add("js");

  // The navigation's button on a phone: open and close it.
  document.addEventListener("click", function (event) {
    var toggle = event.target.closest && event.target.closest("[data-nav-toggle]");
    if (!toggle) return;
    var open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    toggle.closest(".topbar").classList.toggle("nav-open", open);
  });

  // htmx swaps only 2xx answers. Our refusals (no_match, conflict, forbidden, ...) answer with
  // the REST API's 4xx codes and carry a fragment written for the person: show it in place.
  var SHOWN_REFUSALS = [400, 403, 404, 409, 413, 422, 428];
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (SHOWN_REFUSALS.indexOf(event.detail.xhr.status) !== -1) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // The selected text as stored: a direction control is shown as a marker (⟨U+202E⟩) that
  // keeps the character itself in data-char, so a phrase copied across it still matches.
  function selectedText(selection) {
    var holder = document.createElement("div");
    for (var i = 0; i < selection.rangeCount; i++) {
      holder.appendChild(selection.getRangeAt(i).cloneContents());
    }
    holder.querySelectorAll(".bidi[data-char], .invisible[data-char]").forEach(function (marker) {
      marker.replaceWith(marker.dataset.char);
    });
    return holder.textContent;
  }

  // Selecting a phrase in a record's text fills "Find exactly", and "Replace with" with the
  // phrase selected: typing replaces it, an arrow key keeps it to edit a word or two.
  function fillFromSelection() {
    var selection = window.getSelection();
    if (!selection || selection.isCollapsed) return;
    var anchor = selection.anchorNode && selection.anchorNode.parentElement;
    var focus = selection.focusNode && selection.focusNode.parentElement;
    var source = anchor && anchor.closest("[data-phrase-source]");
    if (!source || !focus || source !== focus.closest("[data-phrase-source]")) return;
    var form = document.getElementById("phrase-form");
    if (!form) return;
    var phrase = selectedText(selection);
    if (!phrase.trim()) return;
    var field = form.querySelector("[name=field]");
    if (field && source.dataset.field) field.value = source.dataset.field;
    form.querySelector("[name=old_string]").value = phrase;
    var replacement = form.querySelector("[name=new_string]");
    replacement.value = phrase;
    replacement.dispatchEvent(new Event("input", { bubbles: true }));
    replacement.focus();
    replacement.select();
  }
  document.addEventListener("mouseup", fillFromSelection);
  document.addEventListener("keyup", function (event) {
    if (event.shiftKey) fillFromSelection();
  });

  // "Use this text" on a near miss: the closest text, as stored, becomes what the form looks
  // for (the phrase editor's "Find exactly", or the section or rule it names), then previews.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-use-text]");
    if (!button) return;
    var form = button.closest("form") || document.getElementById("phrase-form");
    if (!form) return;
    var field = form.querySelector("[name=old_string], [name=heading], [name=rule]");
    if (!field) return;
    field.value = button.dataset.useText;
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.focus();
  });

  // A preview belongs to the text it was made from: typing again retires its Apply button
  // until the new preview arrives, so nothing is applied unseen.
  document.addEventListener("input", function (event) {
    var form = event.target.closest && event.target.closest("form[data-preview]");
    if (form) {
      form.querySelectorAll("[data-apply]").forEach(function (button) {
        button.disabled = true;
      });
    }
    if (event.target.matches("input[type=range][data-output]")) {
      var output = document.getElementById(event.target.dataset.output);
      if (output) output.value = Number(event.target.value).toFixed(2);
    }
  });

  // While this page's own write is on its way, the live notice holds its polls: asked in
  // between, it would report that write as someone else's change, mark the preview being
  // applied stale and take away the button whose answer shows the new version.
  var ownWrites = new Set();
  function isLivePoll(elt) {
    return elt && elt.id === "live-notice";
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var detail = event.detail;
    if (isLivePoll(detail.elt)) {
      if (ownWrites.size) event.preventDefault();
    } else if (detail.requestConfig && detail.requestConfig.verb !== "get") {
      ownWrites.add(detail.xhr);
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    ownWrites.delete(event.detail.xhr);
  });
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (isLivePoll(event.detail.elt) && ownWrites.size) event.detail.shouldSwap = false;
  });

  // A preview remembers what asked for it, to ask again once it is stale.
  document.addEventListener("htmx:afterSwap", function (event) {
    var preview = event.detail.target.querySelector && event.detail.target.querySelector(".preview");
    if (preview) preview.madeBy = event.detail.requestConfig && event.detail.requestConfig.elt;
  });

  // A live notice says the record moved on: a preview made from the old version can only be
  // refused, so it no longer offers to apply; it says why and offers to preview again (the
  // answer shows what changed and the change on the current text; so does Ctrl+Enter).
  document.addEventListener("htmx:load", function (event) {
    var notice = event.detail.elt;
    if (!notice.matches || !notice.matches("#live-notice[data-live-version]")) return;
    document.querySelectorAll(".preview").forEach(function (preview) {
      if (preview.querySelector("[data-stale]")) return;
      preview.querySelectorAll("[data-apply]").forEach(function (button) {
        (button.closest(".buttons") || button).remove();
      });
      var note = document.createElement("p");
      note.className = "stale-note";
      note.dataset.stale = "";
      note.textContent = "This preview was made from version " + notice.dataset.loadedVersion +
        "; the record is now at version " + notice.dataset.liveVersion +
        ", so it can no longer be applied. ";
      var again = document.createElement("button");
      again.type = "button";
      again.textContent = "Preview again on the current text";
      again.addEventListener("click", function () {
        var source = preview.madeBy;
        if (source && source.tagName === "FORM") source.requestSubmit();
        else if (source) source.click();
      });
      note.appendChild(again);
      preview.appendChild(note);
    });
  });

  document.addEventListener("keydown", function (event) {
    // Ctrl+Enter (Cmd+Enter): apply the previewed edit, or ask for the preview first.
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      var form = event.target.closest && event.target.closest("form[data-ctrl-enter]");
      if (!form) return;
      event.preventDefault();
      var apply = form.querySelector("[data-apply]:not([disabled])");
      // htmx wires swapped-in content only once the swap settles (20 ms on): a key pressed
      // before that would click a button that does nothing yet, or submit the form plainly.
      if (window.htmx) window.htmx.process(form);
      if (apply) apply.click();
      // Only a form that previews on submit; the others preview from their buttons, and a
      // plain submit would apply unseen.
      else if (form.hasAttribute("hx-post")) form.requestSubmit();
      return;
    }
    // "/" jumps to the search box, as in most review tools.
    if (event.key === "/" && !event.ctrlKey && !event.metaKey) {
      var tag = event.target.tagName;
      if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || event.target.isContentEditable) return;
      var search = document.querySelector("[data-search]");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
    }
  });

  // The suggestions inbox: j and k move between pairs, as in most review tools.
  document.addEventListener("keydown", function (event) {
    if ((event.key !== "j" && event.key !== "k") || event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = event.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || event.target.isContentEditable) return;
    var pairs = Array.prototype.slice.call(document.querySelectorAll("li.suggestion"));
    if (!pairs.length) return;
    var current = pairs.indexOf(event.target.closest ? event.target.closest("li.suggestion") : null);
    var next = event.key === "j" ? current + 1 : current - 1;
    if (current < 0) next = event.key === "j" ? 0 : pairs.length - 1;
    if (next < 0 || next >= pairs.length) return;
    event.preventDefault();
    pairs[next].focus();
    pairs[next].scrollIntoView({ block: "nearest" });
  });

  // "Select all" checkboxes for bulk actions.
  document.addEventListener("change", function (event) {
    var name = event.target.dataset && event.target.dataset.selectAll;
    if (!name) return;
    document.querySelectorAll('input[type=checkbox][name="' + name + '"]').forEach(function (box) {
      box.checked = event.target.checked;
    });
  });

  // Copy buttons (data-copy="ID"): the element's value or text to the clipboard. The
  // clipboard API needs a secure context (https or localhost); elsewhere the text is
  // selected and copied the old way.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.dataset.copy);
    if (!source) return;
    var text = "value" in source ? source.value : source.textContent;
    var done = function () {
      button.textContent = "Copied";
      button.classList.add("copied");
      setTimeout(function () {
        button.textContent = "Copy";
        button.classList.remove("copied");
      }, 1500);
    };
    var fallback = function () {
      var range = document.createRange();
      range.selectNodeContents(source);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if ("select" in source) source.select();
      if (document.execCommand("copy")) done();
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  });

  // A new token's secret is selected on focus, ready to copy.
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("[data-select-on-focus]")) event.target.select();
  });
})();
