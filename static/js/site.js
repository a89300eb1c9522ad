// Site-wide behaviour, no library: copy buttons, confirmations before destructive actions, and
// what a form sent in the background says when the server does not answer.
// Listeners sit on the document, so parts that htmx swaps in keep working.
(function () {
  "use strict";

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Plain http (the devnet): the old way still works.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "absolute";
    area.style.left = "-9999px";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } finally { document.body.removeChild(area); }
    return Promise.resolve();
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    var label = button.textContent;
    copyText(source.textContent.trim()).then(function () {
      button.textContent = document.documentElement.lang === "fr" ? "Copié ✓" : "Copied ✓";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });

  document.addEventListener("submit", function (event) {
    var question = event.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // A form sent in the background that gets no usable answer (a 5xx, which htmx does not
  // swap in, or no answer at all) says so next to its button instead of doing nothing.
  function requestFailed(event) {
    var form = event.detail.elt && event.detail.elt.closest("form");
    if (!form) return;
    var note = form.querySelector(".request-failed");
    if (!note) {
      note = document.createElement("p");
      note.className = "request-failed payment-errors";
      note.setAttribute("role", "alert");
      note.setAttribute("data-testid", "request-failed");
      form.appendChild(note);
    }
    note.textContent = document.body.getAttribute("data-request-failed");
  }
  document.addEventListener("htmx:responseError", requestFailed);
  document.addEventListener("htmx:sendError", requestFailed);
})();
