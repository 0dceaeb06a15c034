using System;
using System.Threading;
using System.Threading.Tasks;

namespace Arcadia.Backend.Common;

/// <summary>
/// Abstraction over the current time so that timers and cooldowns can be tested.
/// </summary>
public interface IClock
{
    /// <summary>The current time in UTC.</summary>
    DateTime UtcNow { get; }

    /// <summary>Waits for the given delay; a fake clock may return immediately.</summary>
    Task DelayAsync(TimeSpan delay, CancellationToken cancellationToken = default);
}

/// <summary>
/// The production clock, backed by the system time.
/// </summary>
/// <param name="Offset">A fixed offset added to the system time, for staging servers.</param>
public sealed record SystemClock(TimeSpan Offset) : IClock
{
    /// <summary>A clock with no offset.</summary>
    public static SystemClock Default { get; } = new(TimeSpan.Zero);

    /// <inheritdoc />
    public DateTime UtcNow => DateTime.UtcNow + Offset;

    /// <inheritdoc />
    public Task DelayAsync(TimeSpan delay, CancellationToken cancellationToken = default) =>
        Task.Delay(delay, cancellationToken);
}
