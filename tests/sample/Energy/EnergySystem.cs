using System;
using System.Collections.Generic;
using System.Linq;
using Arcadia.Backend.Common;

namespace Arcadia.Backend.Energy;

/// <summary>
/// Tracks a player's energy: spending it to start a level and refilling it over time.
/// Each spent point starts its own cooldown timer; when a timer elapses the point comes back.
/// </summary>
public class EnergySystem
{
    private readonly List<DateTime> _timers = new();
    private readonly TimeSpan _cooldown;
    private int _bonusCapacity;

    /// <summary>The energy cap before any bonus from the VIP pass.</summary>
    public const int BaseMaxEnergy = 5;

    /// <summary>
    /// Creates an energy system for one player, starting full.
    /// </summary>
    /// <param name="cooldown">How long one energy point takes to come back.</param>
    public EnergySystem(TimeSpan cooldown)
    {
        if (cooldown <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(cooldown), "Cooldown must be positive.");
        }

        _cooldown = cooldown;
        Current = BaseMaxEnergy;
    }

    /// <summary>The energy points the player can spend right now.</summary>
    public int Current { get; private set; }

    /// <summary>
    /// The most energy the player can hold, including bonus capacity.
    /// Setting it lower drops any energy above the new cap.
    /// </summary>
    public int MaxEnergy
    {
        get
        {
            return BaseMaxEnergy + _bonusCapacity;
        }
        set
        {
            _bonusCapacity = Math.Max(0, value - BaseMaxEnergy);
            Current = Current.Clamp(0, MaxEnergy);
        }
    }

    /// <summary>True when the player has at least one point to spend.</summary>
    public bool CanPlay => Current > 0;

    /// <summary>
    /// Spends energy to start a level and starts one cooldown timer per point spent.
    /// </summary>
    /// <returns>False, and spends nothing, when the player does not have enough energy.</returns>
    public bool SpendEnergy(int amount, DateTime now)
    {
        if (amount <= 0 || amount > Current)
        {
            return false;
        }

        Current -= amount;
        for (var i = 0; i < amount; i++)
        {
            _timers.Add(now + _cooldown);
        }

        return true;
    }

    /// <summary>
    /// Walks the player's pending energy timers and gives back one energy point for every
    /// timer whose cooldown has elapsed, never going above <see cref="MaxEnergy"/>.
    /// </summary>
    /// <param name="now">The current time, usually from <see cref="IClock.UtcNow"/>.</param>
    /// <returns>How many points were refilled.</returns>
    public int RefillTimers(DateTime now)
    {
        var refilled = 0;
        for (var i = _timers.Count - 1; i >= 0; i--)
        {
            if (_timers[i] > now)
            {
                continue;
            }

            _timers.RemoveAt(i);
            if (Current < MaxEnergy)
            {
                Current++;
                refilled++;
            }
        }

        return refilled;
    }

    /// <summary>
    /// The time until the next point comes back, or null when no timer is running.
    /// </summary>
    public TimeSpan? TimeUntilNextRefill(DateTime now)
    {
        if (_timers.Count == 0)
        {
            return null;
        }

        var next = _timers.Min();
        return next > now ? next - now : TimeSpan.Zero;
    }
}
