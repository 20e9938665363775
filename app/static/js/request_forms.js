// A request form sent again after Back answers the file it already made (text_rules.request_key),
// also in a browser that loads the page afresh on Back instead of restoring it from its
// back/forward cache: the fresh page carries a new one-time token, so the token the form was sent
// with is kept on its history entry and put back when Back or Forward returns to that entry.
// A reload or a link ("Request another file") is a fresh load and keeps the new token.
(function () {
  var STATE_KEY = "requestTokens";

  function tokenField(form) {
    return form.querySelector("input[name=request_token]");
  }

  function sentTokens() {
    var state = history.state;
    return state !== null && typeof state === "object" && state[STATE_KEY] ? state[STATE_KEY] : {};
  }

  function keepSentToken(event) {
    var form = event.target;
    var field = form instanceof HTMLFormElement ? tokenField(form) : null;
    if (field === null) {
      return;
    }
    var tokens = Object.assign({}, sentTokens());
    tokens[form.action] = field.value;
    var state = Object.assign({}, history.state || {});
    state[STATE_KEY] = tokens;
    history.replaceState(state, "");
  }

  function reachedThroughHistory() {
    var entries = performance.getEntriesByType("navigation");
    return entries.length > 0 && entries[0].type === "back_forward";
  }

  function restoreSentTokens() {
    if (!reachedThroughHistory()) {
      return;
    }
    var tokens = sentTokens();
    Array.prototype.forEach.call(document.forms, function (form) {
      var field = tokenField(form);
      if (field !== null && Object.prototype.hasOwnProperty.call(tokens, form.action)) {
        field.value = tokens[form.action];
      }
    });
  }

  // Capture phase: the token is kept before the submission leaves the page, whatever else listens.
  document.addEventListener("submit", keepSentToken, true);
  restoreSentTokens();
})();
