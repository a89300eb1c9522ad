"""A minimal EIP-1193 wallet injected into the page, so static/js/wallet.js runs exactly as it
would against a real wallet.

The wallet holds an anvil default account (anvil signs for those itself), so it forwards
reads and eth_sendTransaction to anvil as they are. The page's CSP
(connect-src 'self') applies to injected scripts too, which is right: a real wallet does not
call its RPC from the page either. So the page reaches anvil through a Playwright binding,
answered from Python.
"""

import json

import requests

PROVIDER = """
(() => {
  const wallet = window.__testWallet = Object.assign({calls: []}, __CONFIG__);
  const fail = (code, message) => Object.assign(new Error(message), {code});

  async function anvil(method, params) {
    const answer = await window.__anvilRpc(method, params);
    if (answer.error) throw fail(answer.error.code, answer.error.message);
    return answer.result;
  }

  window.ethereum = {
    async request({method, params = []}) {
      wallet.calls.push({method, params});
      if (wallet.rejects === method) throw fail(4001, "User rejected the request.");
      switch (method) {
        case "eth_requestAccounts":
        case "eth_accounts":
          return [wallet.account];
        case "eth_chainId":
          return wallet.chainId;
        case "wallet_switchEthereumChain":
          if (!wallet.knowsChain) throw fail(4902, "Unrecognized chain ID.");
          wallet.chainId = params[0].chainId;
          return null;
        case "wallet_addEthereumChain":
          // Like some wallets, it adds the chain without switching to it.
          wallet.knowsChain = true;
          return null;
        case "eth_call":
        case "eth_getBalance":
        case "eth_sendTransaction":
        case "eth_getTransactionReceipt":
          return anvil(method, params);
        default:
          throw fail(4200, "Unsupported method " + method);
      }
    },
  };
})();
"""


def wallet_install(
    page, *, rpc_url: str, account: str, knows_chain: bool = True, rejects: str = ""
) -> None:
    """Give `page` a wallet holding `account`, on Ethereum mainnet until the page switches.

    `knows_chain=False`: switching answers 4902 until the page adds the chain.
    `rejects`: the method the user refuses (4001)."""

    def anvil_rpc(method: str, params: list) -> dict:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return requests.post(rpc_url, json=body, timeout=10).json()

    config = {"account": account, "chainId": "0x1", "knowsChain": knows_chain, "rejects": rejects}
    page.expose_function("__anvilRpc", anvil_rpc)
    page.add_init_script(PROVIDER.replace("__CONFIG__", json.dumps(config)))


def wallet_calls(page, method: str) -> list:
    """The params of each `method` request the page made to the wallet."""
    calls = page.evaluate("window.__testWallet.calls")
    return [call["params"] for call in calls if call["method"] == method]
