// Payment section: the payment countdown (copy buttons are site-wide, in site.js). No library;
// safe to load twice (htmx re-inserts the section after a form post).
(function () {
  "use strict";
  if (window.locagpuPayments) return;
  window.locagpuPayments = true;

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  function show(el, text) {
    // Only a change is written: writing is a mutation, which the observer below would see.
    if (el.textContent !== text) el.textContent = text;
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var left = Math.floor((Date.parse(el.getAttribute("data-countdown")) - now) / 1000);
      if (isNaN(left)) return;
      if (left <= 0) {
        show(el, el.getAttribute("data-expired-text"));
        el.classList.add("countdown-over");
        return;
      }
      var hours = Math.floor(left / 3600);
      var minutes = Math.floor((left % 3600) / 60);
      show(el, (hours ? hours + ":" + pad(minutes) : minutes) + ":" + pad(left % 60));
      el.classList.toggle("countdown-soon", left < 300);
    });
  }

  function bringsCountdown(node) {
    return node.nodeType === Node.ELEMENT_NODE
      && (node.matches("[data-countdown]") || node.querySelector("[data-countdown]") !== null);
  }

  // A countdown swapped in (htmx, in band or out of band) comes with the deadline's clock time
  // written by the server: it shows the time left before the browser paints it, not up to a
  // second later at the next tick.
  new MutationObserver(function (records) {
    var added = records.some(function (record) {
      return Array.prototype.some.call(record.addedNodes, bringsCountdown);
    });
    if (added) tick();
  }).observe(document.body, { childList: true, subtree: true });
  tick();
  setInterval(tick, 1000);
})();
