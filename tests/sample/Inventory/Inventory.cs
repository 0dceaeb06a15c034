using System;
using System.Collections.Generic;
using System.Linq;
using Arcadia.Backend.Common;

namespace Arcadia.Backend.Items
{
    /// <summary>
    /// The items a player owns, as stacks keyed by item id.
    /// </summary>
    public class Inventory
    {
        /// <summary>The most of one item a single stack can hold.</summary>
        public const int MaxStackSize = 999;

        private readonly Dictionary<string, Stack> _stacks = new(StringComparer.Ordinal);
        private readonly Func<string, ItemRarity> _rarityLookup;

        /// <summary>
        /// Creates an empty inventory.
        /// </summary>
        /// <param name="rarityLookup">Resolves an item id to its rarity, usually from the game config.</param>
        public Inventory(Func<string, ItemRarity> rarityLookup)
        {
            _rarityLookup = rarityLookup;
        }

        /// <summary>
        /// The quantity of an item the player owns, or zero when they have none.
        /// </summary>
        public int this[string itemId] => _stacks.TryGetValue(itemId, out var stack) ? stack.Quantity : 0;

        /// <summary>The number of distinct items owned.</summary>
        public int Count => _stacks.Count;

        #region Mutations

        /// <summary>
        /// Adds items to the player's stack, capped at <see cref="MaxStackSize"/>.
        /// </summary>
        /// <returns>How many were actually added.</returns>
        public int AddItem(string itemId, int quantity = 1)
        {
            if (quantity <= 0)
            {
                throw new ArgumentOutOfRangeException(nameof(quantity), quantity, "Quantity must be positive.");
            }

            if (!_stacks.TryGetValue(itemId, out var stack))
            {
                stack = new Stack(itemId, _rarityLookup(itemId));
                _stacks[itemId] = stack;
            }

            var before = stack.Quantity;
            stack.Quantity = (before + quantity).Clamp(0, MaxStackSize);
            return stack.Quantity - before;
        }

        /// <summary>
        /// Removes items, for example when the player uses or sells them.
        /// </summary>
        /// <returns>False, and removes nothing, when the player does not own enough.</returns>
        public bool RemoveItem(string itemId, int quantity = 1)
        {
            if (!_stacks.TryGetValue(itemId, out var stack) || stack.Quantity < quantity)
            {
                return false;
            }

            stack.Quantity -= quantity;
            if (stack.Quantity == 0)
            {
                _stacks.Remove(itemId);
            }

            return true;
        }

        #endregion

        /// <summary>
        /// The owned items of at least the given rarity, rarest first.
        /// </summary>
        public IEnumerable<string> ItemsOfRarity(ItemRarity minimum) =>
            _stacks.Values
                .Where(s => s.Rarity >= minimum)
                .OrderByDescending(s => s.Rarity)
                .Select(s => s.ItemId);

        /// <summary>One stack of identical items.</summary>
        private sealed class Stack
        {
            public Stack(string itemId, ItemRarity rarity)
            {
                ItemId = itemId;
                Rarity = rarity;
            }

            public string ItemId { get; }

            public ItemRarity Rarity { get; }

            public int Quantity { get; set; }
        }
    }
}
