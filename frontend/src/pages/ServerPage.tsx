import { Breadcrumbs, SubjectTabs } from "../components/Bits";
import { CostView } from "../components/CostView";
import { CurvePage } from "./CurvePage";

export function ServerPage({ id }: { id: string }) {
  return (
    <div className="page">
      <Breadcrumbs items={[["Servers", "/servers"], ["Server", null]]} />
      <SubjectTabs kind="server" id={id} />
      <CurvePage kind="server" id={id} />
      <CostView kind="server" id={id} />
    </div>
  );
}
