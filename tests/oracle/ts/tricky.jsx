import React from "react";

/** A JSX component in a .jsx file. */
export default function App({ items }) {
    return <ul>{items.map(i => <li key={i}>{i}{"}"}</li>)}</ul>;
}

export const Row = React.memo(function Row({ value }) {
    return <tr><td>{value}</td></tr>;
});

export const Arrow = () => <p>/* {"{"} */</p>;

export class Old extends React.Component {
    handleClick = () => {};
    render() { return <button onClick={this.handleClick} />; }
}
