// "Pay with my wallet": drives the browser wallet (EIP-1193, window.ethereum) to send the exact
// payment of the invoice, then records its hash as an "I've paid" claim. No library and no
// inline script (the CSP forbids it): the page gives everything as data attributes of
// [data-wallet], messages included, already in the customer's language. Amounts stay BigInt
// base units from the page to the wallet: a float would round them.
(function () {
  "use strict";
  if (window.locagpuWallet) return; // htmx re-inserts the section, and this script with it
  window.locagpuWallet = true;

  var TRANSFER = "a9059cbb"; // selector of transfer(address,uint256)
  var BALANCE_OF = "70a08231"; // selector of balanceOf(address)
  var USER_REJECTED = 4001;
  var UNKNOWN_CHAIN = 4902;
  // A receipt is awaited for up to two minutes; after that the transaction counts as dropped.
  var RECEIPT_POLLS = 40;
  var RECEIPT_INTERVAL_MS = 3000;

  function reveal() {
    if (!window.ethereum) return;
    document.querySelectorAll("[data-wallet][hidden]").forEach(function (box) {
      box.hidden = false;
    });
  }

  function ask(method, params) {
    return window.ethereum.request({ method: method, params: params || [] });
  }

  function sleep(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  // A failure of one step, named for the message the customer gets.
  function Problem(kind, cause) {
    this.kind = kind;
    this.cause = cause;
  }

  function word(hex) {
    return hex.replace(/^0x/, "").toLowerCase().padStart(64, "0");
  }

  async function onChain(box) {
    var wanted = box.dataset.chainId;
    var current = async function () { return BigInt(await ask("eth_chainId")) === BigInt(wanted); };
    if (await current()) return;
    try {
      await ask("wallet_switchEthereumChain", [{ chainId: wanted }]);
    } catch (error) {
      if (error.code !== UNKNOWN_CHAIN || !box.dataset.rpcUrl) throw new Problem("chain", error);
      try {
        await ask("wallet_addEthereumChain", [{
          chainId: wanted,
          chainName: box.dataset.chainName,
          rpcUrls: [box.dataset.rpcUrl],
          nativeCurrency: {
            name: box.dataset.nativeName,
            symbol: box.dataset.nativeSymbol,
            decimals: Number(box.dataset.nativeDecimals),
          },
        }]);
        // Some wallets add the chain without switching to it.
        if (!(await current())) await ask("wallet_switchEthereumChain", [{ chainId: wanted }]);
      } catch (addError) {
        throw new Problem("chain", addError);
      }
    }
    if (!(await current())) throw new Problem("chain");
  }

  function transaction(box, from) {
    var amount = "0x" + BigInt(box.dataset.amount).toString(16);
    if (!box.dataset.token) return { from: from, to: box.dataset.to, value: amount };
    return { from: from, to: box.dataset.token, data: "0x" + TRANSFER + word(box.dataset.to) + word(amount) };
  }

  // Checked here because a token short of balance often reverts without a readable reason.
  async function enough(box, from) {
    var balance = box.dataset.token
      ? await ask("eth_call", [{ to: box.dataset.token, data: "0x" + BALANCE_OF + word(from) }, "latest"])
      : await ask("eth_getBalance", [from, "latest"]);
    return BigInt(balance) >= BigInt(box.dataset.amount);
  }

  async function send(box) {
    var accounts = await ask("eth_requestAccounts");
    await onChain(box);
    if (!(await enough(box, accounts[0]))) throw new Problem("funds");
    return ask("eth_sendTransaction", [transaction(box, accounts[0])]);
  }

  // The claim form's endpoint; HX-Request asks for the small section answer, not a whole page.
  async function claim(box, txHash) {
    var body = new FormData();
    body.append("tx_hash", txHash);
    var answer = await fetch(box.dataset.claimUrl, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-CSRFToken": box.dataset.csrfToken, "HX-Request": "true" },
    });
    return answer.ok;
  }

  async function mined(txHash) {
    for (var poll = 0; poll < RECEIPT_POLLS; poll++) {
      var receipt = await ask("eth_getTransactionReceipt", [txHash]);
      if (receipt) return BigInt(receipt.status) === 1n;
      await sleep(RECEIPT_INTERVAL_MS);
    }
    return false;
  }

  function kindOf(error) {
    if (error instanceof Problem) return error.kind;
    if (error && error.code === USER_REJECTED) return "rejected";
    var text = String((error && (error.message || (error.data && error.data.message))) || "");
    if (/insufficient (funds|balance)|exceeds balance/i.test(text)) return "funds";
    return "generic";
  }

  function say(box, kind) {
    var message = box.querySelector("[data-wallet-message]");
    message.textContent = box.getAttribute("data-msg-" + kind);
    message.classList.toggle("payment-errors", ["pending", "sent"].indexOf(kind) < 0);
  }

  async function pay(box, button) {
    var txHash;
    say(box, "pending");
    try {
      txHash = await send(box);
    } catch (error) {
      say(box, kindOf(error));
      button.disabled = false;
      return;
    }
    // Recorded before the receipt: if the page closes meanwhile, the hash is already with us.
    var recorded = await claim(box, txHash).catch(function () { return false; });
    if (!recorded) {
      var field = document.querySelector("input[name=tx_hash]");
      if (field) field.value = txHash;
    }
    say(box, recorded ? "sent" : "claim-failed");
    var ok = await mined(txHash).catch(function () { return false; });
    if (!ok) {
      say(box, "dropped");
      button.disabled = false;
    }
    // Once paid, the button stays disabled: the section's poll takes the page from here.
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-wallet-pay]");
    if (!button || button.disabled || !window.ethereum) return;
    // Disabled from the first click until the flow ends: a double click sends one payment.
    button.disabled = true;
    pay(button.closest("[data-wallet]"), button);
  });

  reveal();
  document.addEventListener("htmx:load", reveal);
  // Some wallets inject their provider after the page has loaded.
  window.addEventListener("ethereum#initialized", reveal);
})();
