// memloop console behaviour: keyboard use of the review queue, toasts, the side sheet.
// Loaded from /static (CSP: script-src 'self'); no inline handlers anywhere.
(function () {
  "use strict";

  // htmx attaches handlers to swapped-in content only when it settles, 20 ms later by default; a
  // control changed inside that window (a fast hand, a test driver) did nothing. Settle at once.
  if (window.htmx) window.htmx.config.defaultSettleDelay = 0;

  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }

  // Review queue: j/k move between items, r focuses the reason, a/d approve/deny the focused item.
  function currentItem() {
    var active = document.activeElement;
    return active && active.closest ? active.closest("[data-review-item]") : null;
  }
  function moveItem(step) {
    var items = Array.prototype.slice.call(document.querySelectorAll("[data-review-item]"));
    if (!items.length) return;
    var index = items.indexOf(currentItem());
    var next = items[Math.max(0, Math.min(items.length - 1, index + step))] || items[0];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { closeSheet(); return; }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var item = currentItem();
    if (event.key === "j") { moveItem(1); event.preventDefault(); }
    else if (event.key === "k") { moveItem(-1); event.preventDefault(); }
    else if (item && event.key === "r") { item.querySelector("[data-reason]").focus(); event.preventDefault(); }
    else if (item && (event.key === "a" || event.key === "d")) {
      var reason = item.querySelector("[data-reason]");
      if (reason && !reason.value.trim()) { reason.focus(); event.preventDefault(); return; }
      var button = item.querySelector(event.key === "a" ? "[data-approve]" : "[data-deny]");
      if (button) { button.click(); event.preventDefault(); }
    }
  });

  // Toasts: dismiss on click; success toasts leave by themselves, errors stay until dismissed.
  document.addEventListener("click", function (event) {
    var dismiss = event.target.closest && event.target.closest("[data-dismiss-toast]");
    if (dismiss) dismiss.closest(".toast").remove();
    if (event.target.closest && event.target.closest("[data-close-sheet]")) closeSheet();
  });
  function expireToasts(root) {
    (root || document).querySelectorAll(".toast[data-toast='ok']:not([data-timed])").forEach(function (toast) {
      toast.setAttribute("data-timed", "1");
      setTimeout(function () { toast.remove(); }, 8000);
    });
  }
  document.addEventListener("DOMContentLoaded", function () { expireToasts(); });

  // Side sheet (not a modal): opens when htmx fills it, Escape or ✕ closes it, focus returns.
  var opener = null;
  function openSheet() {
    var sheet = document.getElementById("sheet");
    sheet.hidden = false;
    var title = document.getElementById("sheet-title");
    if (title) title.focus();
  }
  function closeSheet() {
    var sheet = document.getElementById("sheet");
    if (!sheet || sheet.hidden) return;
    sheet.hidden = true;
    if (opener && document.body.contains(opener)) opener.focus();
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt && event.detail.elt.hasAttribute && event.detail.elt.hasAttribute("data-opens-sheet")) opener = event.detail.elt;
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "sheet-body") openSheet();
    if (event.detail.target && event.detail.target.id === "lp-panel") event.detail.target.removeAttribute("aria-busy");
    expireToasts();
    var resolved = event.detail.target && event.detail.target.querySelector && event.detail.target.querySelector("[data-resolved]");
    if (resolved) moveItem(1);
  });
  document.addEventListener("htmx:oobAfterSwap", function () { expireToasts(); });
  document.addEventListener("DOMContentLoaded", function () {
    document.body.addEventListener("procedures-changed", closeSheet);
  });
})();
