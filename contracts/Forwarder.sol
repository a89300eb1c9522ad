// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Sends on the ether it receives, inside the same call.
/// @notice For the test suite: the recipient gets ETH from a contract (an internal transaction),
/// the way Safe wallets and exchanges' batched payouts pay, so no top-level transaction
/// names the recipient.
contract Forwarder {
    function forward(address payable to) external payable {
        _send(to, msg.value);
    }

    /// @notice One payout per recipient in one transaction; the values must add up to msg.value.
    function forwardMany(address payable[] calldata to, uint256[] calldata values)
        external
        payable
    {
        require(to.length == values.length, "length");
        uint256 total = 0;
        for (uint256 i = 0; i < to.length; i++) {
            total += values[i];
            _send(to[i], values[i]);
        }
        require(total == msg.value, "total");
    }

    function _send(address payable to, uint256 value) private {
        (bool sent, ) = to.call{value: value}("");
        require(sent, "send");
    }
}
