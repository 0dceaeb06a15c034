import React, { forwardRef, memo, useCallback } from "react";
import styled from "styled-components";

/** A component as an arrow. */
export const Button = ({ label }: { label: string }) => <button>{label}{"}"}</button>;

export const Generic = <T,>(props: { items: T[] }) => (
    <ul>{props.items.map((item, i) => <li key={i}>{`${item}}`}</li>)}</ul>
);

export const Input = forwardRef<HTMLInputElement, { value: string }>(function Input(props, ref) {
    const onChange = useCallback(() => {}, []);     // inside a body: not a chunk
    return <input ref={ref} value={props.value} onChange={onChange} />;
});

export const Card = memo(forwardRef((props: { title: string }, ref: React.Ref<HTMLDivElement>) => (
    <div ref={ref}>/** not a comment */ {props.title}</div>
)));

export const Title = styled.h1`
  color: ${(p: { color: string }) => p.color};
`;
export const Wrapper = styled("div")((p: { gap: number }) => ({ gap: p.gap }));

export function Page(): JSX.Element {
    const inner = () => <span>{"{"}</span>;
    return <main>{inner()}</main>;
}

export default function () {
    return <>{'}'}</>;
}

class Legacy extends React.Component<{ n: number }> {
    state = { open: false };
    toggle = () => this.setState({ open: !this.state.open });
    render() {
        return <div onClick={this.toggle}>{this.props.n}</div>;
    }
}

export const icons = {
    close: <svg viewBox="0 0 10 10"><path d="M0 0L10 10" /></svg>,
    render: () => <svg />,
};

export interface Props { children?: React.ReactNode }
export type Variant = "primary" | "secondary";
