using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Arcadia.Backend.Common;

namespace Arcadia.Backend.Matchmaking;

/// <summary>
/// Pairs players for head-to-head matches by skill rating. A player who waits longer
/// accepts a wider rating gap, so nobody waits forever in a quiet region.
/// </summary>
public class Matchmaker
{
    private readonly List<Ticket> _queue = new();
    private readonly IClock _clock;

    /// <summary>The rating gap accepted the moment a player joins the queue.</summary>
    public int InitialWindow { get; init; } = 50;

    /// <summary>How much the accepted gap widens for every second of waiting.</summary>
    public int WindowGrowthPerSecond { get; init; } = 10;

    /// <summary>The widest gap ever accepted, however long the wait.</summary>
    public int MaxWindow { get; init; } = 400;

    /// <summary>Creates a matchmaker with an empty queue.</summary>
    public Matchmaker(IClock clock) => _clock = clock;

    /// <summary>The number of players waiting.</summary>
    public int QueueLength => _queue.Count;

    /// <summary>
    /// Puts a player in the queue and returns their ticket.
    /// </summary>
    public Ticket Enqueue(string playerId, int rating)
    {
        var ticket = new Ticket(playerId, rating, _clock.UtcNow);
        _queue.Add(ticket);
        return ticket;
    }

    /// <summary>
    /// Looks for an opponent for the given ticket: the closest-rated waiting player whose
    /// rating is within both players' current search windows. Matched tickets leave the queue.
    /// </summary>
    /// <returns>The opponent's ticket, or null when nobody is close enough yet.</returns>
    public Ticket? FindMatch(Ticket ticket)
    {
        var now = _clock.UtcNow;
        Ticket? best = null;
        var bestGap = int.MaxValue;

        foreach (var other in _queue)
        {
            if (ReferenceEquals(other, ticket))
            {
                continue;
            }

            var gap = Math.Abs(other.Rating - ticket.Rating);
            var allowed = Math.Min(WindowFor(ticket, now), WindowFor(other, now));
            if (gap <= allowed && gap < bestGap)
            {
                best = other;
                bestGap = gap;
            }
        }

        if (best is not null)
        {
            _queue.Remove(ticket);
            _queue.Remove(best);
        }

        return best;
    }

    /// <summary>
    /// Retries <see cref="FindMatch"/> once a second until a match is found or the caller gives up.
    /// </summary>
    public async Task<Ticket?> WaitForMatchAsync(Ticket ticket, CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            if (FindMatch(ticket) is { } opponent)
            {
                return opponent;
            }

            await _clock.DelayAsync(TimeSpan.FromSeconds(1), cancellationToken);
        }

        _queue.Remove(ticket);
        return null;
    }

    private int WindowFor(Ticket ticket, DateTime now)
    {
        var waited = (int)(now - ticket.EnqueuedAt).TotalSeconds;
        return (InitialWindow + waited * WindowGrowthPerSecond).Clamp(InitialWindow, MaxWindow);
    }

    /// <summary>
    /// One player's place in the matchmaking queue.
    /// </summary>
    public sealed class Ticket
    {
        internal Ticket(string playerId, int rating, DateTime enqueuedAt)
        {
            PlayerId = playerId;
            Rating = rating;
            EnqueuedAt = enqueuedAt;
        }

        /// <summary>The waiting player.</summary>
        public string PlayerId { get; }

        /// <summary>The player's skill rating when they joined.</summary>
        public int Rating { get; }

        /// <summary>When the player joined the queue.</summary>
        public DateTime EnqueuedAt { get; }

        /// <inheritdoc />
        public override string ToString() => $"{PlayerId} ({Rating})";
    }
}
