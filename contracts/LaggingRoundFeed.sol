// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import "@chainlink/contracts/src/v0.8/shared/interfaces/AggregatorV3Interface.sol";

/// @title A Chainlink feed whose latest answer was carried over from an earlier round.
/// @notice For the test suite: Chainlink's MockV3Aggregator always answers in the round it
/// reports, so this wraps one and reports `answeredInRound = roundId - 1`, the shape an
/// aggregator gives when a round started but did not complete.
contract LaggingRoundFeed is AggregatorV3Interface {
    AggregatorV3Interface public immutable source;

    constructor(AggregatorV3Interface _source) {
        source = _source;
    }

    function decimals() external view override returns (uint8) {
        return source.decimals();
    }

    function description() external view override returns (string memory) {
        return source.description();
    }

    function version() external view override returns (uint256) {
        return source.version();
    }

    function getRoundData(uint80 _roundId)
        external
        view
        override
        returns (uint80, int256, uint256, uint256, uint80)
    {
        return source.getRoundData(_roundId);
    }

    function latestRoundData()
        external
        view
        override
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        (roundId, answer, startedAt, updatedAt, ) = source.latestRoundData();
        answeredInRound = roundId - 1;
    }
}
